import HTTPServer
import Realms

/// `GET /api/admin/audit`: every admin change, newest first, optionally filtered.
struct AuditAdminHandlers: Sendable {
    let stores: AdminStores

    var routes: [AdminRoute] {
        [AdminRoute("GET", "/api/admin/audit", list)]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let page = query.page()
        let filter = AuditFilter(actor: query.text("actor", maxLength: 64), action: query.text("action", maxLength: 64),
                                 realmID: query.text("realm", maxLength: 63), target: query.text("target", maxLength: 512))
        try query.validate()
        return .json(ListResponse(try await stores.audit.list(filter: filter, page: page)))
    }
}

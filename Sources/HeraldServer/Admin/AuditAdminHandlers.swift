import HTTPServer
import Realms

/// `GET /api/admin/audit`: every admin change, newest first, optionally filtered; a realm-scoped
/// token sees only its realms' entries (not admin-token changes, which belong to no realm).
struct AuditAdminHandlers: Sendable {
    let stores: AdminStores

    var routes: [AdminRoute] {
        // The list answers only entries of the caller's realms.
        [AdminRoute("GET", "/api/admin/audit", reach: .scoped, list)]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let page = query.page()
        let filter = AuditFilter(actor: query.text("actor", maxLength: 64), action: query.text("action", maxLength: 64),
                                 realmID: query.text("realm", maxLength: 63), target: query.text("target", maxLength: 512),
                                 onlyRealmIDs: caller.visibleRealms)
        try query.validate()
        return .json(ListResponse(try await stores.audit.list(filter: filter, page: page)))
    }
}

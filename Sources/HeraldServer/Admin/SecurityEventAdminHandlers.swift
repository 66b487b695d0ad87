import HTTPServer
import Realms

/// `GET /api/admin/realms/:realm/events`: the realm's security events, newest first, paged,
/// optionally of one `type`.
struct SecurityEventAdminHandlers: Sendable {
    let stores: AdminStores

    var routes: [AdminRoute] {
        [AdminRoute("GET", "/api/admin/realms/:realm/events", list)]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let page = query.page()
        let type = query.enumeration("type", SecurityEventType.self)
        try query.validate()
        return .json(ListResponse(try await stores.events.list(realmID: request.parameter("realm"), type: type, page: page)))
    }
}

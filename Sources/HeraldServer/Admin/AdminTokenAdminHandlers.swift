import HTTPServer
import Realms

/// `/api/admin/tokens[/:name]`: admin tokens, managed by an all-realms token (the routes have
/// no realm, so `AdminRoute` makes them all-realms only). The token itself appears once, in the
/// create response; it is stored hashed.
struct AdminTokenAdminHandlers: Sendable {
    let stores: AdminStores

    /// The most realms one token may name (a bound on what one request makes the row store).
    static let maxRealms = 200

    var routes: [AdminRoute] {
        [
            AdminRoute("GET", "/api/admin/tokens", list),
            AdminRoute("POST", "/api/admin/tokens", create),
            AdminRoute("DELETE", "/api/admin/tokens/:name", delete),
        ]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let page = query.page()
        try query.validate()
        let tokens = try await stores.adminTokens.list(page: page)
        return .json(ListResponse(Page(items: tokens.items.map { AdminTokenResponse($0) }, nextCursor: tokens.nextCursor)))
    }

    /// `{"name", "role"?: "admin"|"viewer" (admin), "realms"?: [ids] (absent or null: all realms)}`.
    func create(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        var body = try JSONRequestBody(request, allowedFields: ["name", "role", "realms"])
        let name = body.string("name", required: true, maxLength: 64)
        let role = body.enumeration("role", AdminRole.self) ?? .admin
        let realms = body.strings("realms", maxCount: Self.maxRealms, maxLength: 63)
        if let realms, realms.isEmpty { body.problem("realms", "must name at least one realm, or be left out for all realms") }
        try body.validate()
        let scope: AdminScope = realms.map { .realms(Set($0)) } ?? .allRealms
        let issued = try await stores.adminTokens.issue(name: name ?? "", role: role, scope: scope, context: context)
        return .json(status: 201, AdminTokenResponse(issued.token, secret: issued.secret), noStore: true)
    }

    func delete(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        try await stores.adminTokens.revoke(name: request.parameter("name"), context: context)
        return .noContent
    }
}

import HTTPServer
import Realms

/// `/api/admin/realms/:realm/clients[/:client[/secret]]`. Secrets appear only in the response
/// that generated them, as `clientSecret`.
struct ClientAdminHandlers: Sendable {
    let stores: AdminStores

    static let fields: Set<String> = [
        "name", "firstParty", "confidential", "redirectUris", "allowedScopes", "enabled", "ipBinding",
        "accessTokenTTL", "refreshTokenTTL", "refreshIdleTTL",
    ]

    var routes: [AdminRoute] {
        [
            AdminRoute("GET", "/api/admin/realms/:realm/clients", list),
            AdminRoute("POST", "/api/admin/realms/:realm/clients", create),
            AdminRoute("GET", "/api/admin/realms/:realm/clients/:client", read),
            AdminRoute("PATCH", "/api/admin/realms/:realm/clients/:client", update),
            AdminRoute("DELETE", "/api/admin/realms/:realm/clients/:client", delete),
            AdminRoute("POST", "/api/admin/realms/:realm/clients/:client/secret", rotateSecret),
        ]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let page = query.page()
        try query.validate()
        return .json(ListResponse(try await stores.clients.list(realmID: request.parameter("realm"), page: page)))
    }

    func create(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        var body = try JSONRequestBody(request, allowedFields: Self.fields.union(["clientId"]))
        let clientID = body.string("clientId", required: true, maxLength: 128)
        let changes = Self.changes(from: &body)
        if changes.name == nil, body.problems["name"] == nil { body.problem("name", "is required") }
        if let clientID, let problem = InputRules.clientIDProblem(clientID) { body.problem("clientId", problem) }
        body.add(changes.fieldIssues())
        try body.validate()
        let result = try await stores.clients.create(realmID: request.parameter("realm"), clientID: clientID ?? "",
                                                     changes: changes, context: context)
        return .json(status: 201, ClientAppResponse(result: result), noStore: result.clientSecret != nil)
    }

    func read(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        guard try await stores.realms.realm(realmID) != nil else { throw RealmsError.notFound("realm") }
        guard let client = try await stores.clients.client(realmID: realmID, clientID: request.parameter("client")) else {
            throw RealmsError.notFound("client")
        }
        return .json(client)
    }

    func update(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        var body = try JSONRequestBody(request, allowedFields: Self.fields)
        let changes = Self.changes(from: &body)
        body.add(changes.fieldIssues())
        try body.validate()
        let result = try await stores.clients.update(realmID: request.parameter("realm"), clientID: request.parameter("client"),
                                                     changes: changes, context: context)
        return .json(ClientAppResponse(result: result), noStore: result.clientSecret != nil)
    }

    func delete(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        try await stores.clients.delete(realmID: request.parameter("realm"), clientID: request.parameter("client"),
                                        context: context)
        return .noContent
    }

    func rotateSecret(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        let result = try await stores.clients.rotateSecret(realmID: request.parameter("realm"),
                                                           clientID: request.parameter("client"), context: context)
        return .json(ClientAppResponse(result: result), noStore: true)
    }

    /// The client settings in a create or update body; problems are recorded on `body`.
    static func changes(from body: inout JSONRequestBody) -> ClientAppChanges {
        body.refuseNull(["name", "firstParty", "confidential", "redirectUris", "allowedScopes", "enabled", "ipBinding"])
        return ClientAppChanges(
            name: body.string("name", maxLength: 1024),
            firstParty: body.bool("firstParty"),
            confidential: body.bool("confidential"),
            redirectUris: body.strings("redirectUris", maxCount: ClientApp.maxRedirectURIs, maxLength: InputRules.maxURLLength),
            allowedScopes: body.strings("allowedScopes", maxCount: ClientApp.maxScopes, maxLength: 64),
            enabled: body.bool("enabled"),
            ipBinding: body.bool("ipBinding"),
            accessTokenTTL: body.nullableInteger("accessTokenTTL", in: Realm.accessTokenTTLRange),
            refreshTokenTTL: body.nullableInteger("refreshTokenTTL", in: Realm.refreshTokenTTLRange),
            refreshIdleTTL: body.nullableInteger("refreshIdleTTL", in: Realm.refreshIdleTTLRange))
    }
}

import HTTPServer
import Realms

/// `/api/admin/realms/:realm/providers/apple`. The private key is write-only: PUT without it
/// keeps the stored key, `null` removes it, and reads show only `privateKeyConfigured`.
struct AppleProviderAdminHandlers: Sendable {
    let stores: AdminStores

    static let fields: Set<String> = ["enabled", "clientId", "audiences", "teamId", "keyId", "privateKey", "scopes", "returnUrls"]

    var routes: [AdminRoute] {
        [
            AdminRoute("GET", "/api/admin/realms/:realm/providers/apple", read),
            AdminRoute("PUT", "/api/admin/realms/:realm/providers/apple", put),
            AdminRoute("DELETE", "/api/admin/realms/:realm/providers/apple", delete),
        ]
    }

    func read(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        guard try await stores.realms.realm(realmID) != nil else { throw RealmsError.notFound("realm") }
        guard let config = try await stores.appleProviders.config(realmID: realmID) else {
            throw RealmsError.notFound("Apple provider")
        }
        return .json(config)
    }

    func put(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        let realmID = request.parameter("realm")
        var body = try JSONRequestBody(request, allowedFields: Self.fields)
        body.refuseNull(["enabled", "clientId", "audiences", "scopes", "returnUrls"])
        var privateKey = AppleProviderSettings.PrivateKeyUpdate.keep
        if body.isExplicitNull("privateKey") {
            privateKey = .remove
        } else if let pem = body.string("privateKey", maxLength: AppleProviderSettings.maxPrivateKeyLength) {
            privateKey = .replace(pem)
        }
        let settings = AppleProviderSettings(
            enabled: body.bool("enabled"),
            clientId: body.string("clientId", required: true, maxLength: 255),
            audiences: body.strings("audiences", maxCount: AppleProviderConfig.maxAudiences, maxLength: 255),
            teamId: body.string("teamId", maxLength: 64),
            keyId: body.string("keyId", maxLength: 64),
            privateKey: privateKey,
            scopes: body.strings("scopes", maxCount: 10, maxLength: 64),
            returnUrls: body.strings("returnUrls", maxCount: AppleProviderSettings.maxReturnUrls, maxLength: InputRules.maxURLLength))
        body.add(settings.fieldIssues())
        try body.validate()
        return .json(try await stores.appleProviders.put(realmID: realmID, settings: settings, context: context))
    }

    func delete(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        try await stores.appleProviders.delete(realmID: request.parameter("realm"), context: context)
        return .noContent
    }
}

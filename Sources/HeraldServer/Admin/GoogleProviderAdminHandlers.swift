import HTTPServer
import Realms

/// `/api/admin/realms/:realm/providers/google`: the client ids (web, Android, iOS) whose Google
/// ID tokens the realm accepts, and an optional Workspace domain. PUT replaces the whole
/// configuration; nothing in it is secret.
struct GoogleProviderAdminHandlers: Sendable {
    let stores: AdminStores

    static let fields: Set<String> = ["enabled", "clientIds", "hostedDomain"]

    var routes: [AdminRoute] {
        [
            AdminRoute("GET", "/api/admin/realms/:realm/providers/google", read),
            AdminRoute("PUT", "/api/admin/realms/:realm/providers/google", put),
            AdminRoute("DELETE", "/api/admin/realms/:realm/providers/google", delete),
        ]
    }

    func read(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        guard try await stores.realms.realm(realmID) != nil else { throw RealmsError.notFound("realm") }
        guard let config = try await stores.googleProviders.config(realmID: realmID) else {
            throw RealmsError.notFound("Google provider")
        }
        return .json(config)
    }

    func put(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        let realmID = request.parameter("realm")
        var body = try JSONRequestBody(request, allowedFields: Self.fields)
        body.refuseNull(["enabled", "clientIds"])
        let settings = GoogleProviderSettings(
            enabled: body.bool("enabled"),
            clientIds: body.strings("clientIds", required: true, maxCount: GoogleProviderConfig.maxClientIds, maxLength: 255),
            hostedDomain: body.string("hostedDomain", maxLength: 253))
        // The domain's rules name each bad entry; a field the body already refused keeps its reason.
        body.add(settings.fieldIssues())
        try body.validate()
        return .json(try await stores.googleProviders.put(realmID: realmID, settings: settings, context: context))
    }

    func delete(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        try await stores.googleProviders.delete(realmID: request.parameter("realm"), context: context)
        return .noContent
    }
}

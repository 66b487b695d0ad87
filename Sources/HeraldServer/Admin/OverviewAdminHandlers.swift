import HTTPServer
import Realms

/// `GET /api/admin/realms/:realm/overview?window=24h|7d`: the console's landing page for a realm
/// (sign-ins by slot, outcome, reason, provider and door; Apple's health; warnings). Read-only,
/// so viewers of the realm may read it.
struct OverviewAdminHandlers: Sendable {
    let stores: AdminStores

    var routes: [AdminRoute] {
        [AdminRoute("GET", "/api/admin/realms/:realm/overview", read)]
    }

    func read(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        var query = AdminQuery(request)
        let window = query.enumeration("window", RealmOverviewWindow.self) ?? .day
        try query.validate()
        guard let overview = try await stores.overviews.overview(realmID: request.parameter("realm"), window: window) else {
            throw RealmsError.notFound("realm")
        }
        return .json(overview)
    }
}

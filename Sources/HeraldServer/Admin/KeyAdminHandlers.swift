import HTTPServer
import Realms
import TokenIssuer

/// `/api/admin/realms/:realm/keys`: the realm's signing keys (public data only) and rotation.
struct KeyAdminHandlers: Sendable {
    let stores: AdminStores

    var routes: [AdminRoute] {
        [
            AdminRoute("GET", "/api/admin/realms/:realm/keys", list),
            AdminRoute("POST", "/api/admin/realms/:realm/keys/rotate", rotate),
        ]
    }

    func list(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        guard try await stores.realms.realm(realmID) != nil else { throw RealmsError.notFound("realm") }
        return .json(ListResponse(Page(items: try await stores.keyRing.keys(realmID: realmID).map(SigningKeyResponse.init), nextCursor: nil)))
    }

    /// A new active key of the realm's algorithm; the old one stays published until every token it signed expired.
    func rotate(_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse {
        let context = try caller.changeContext(request)
        return .json(status: 201, SigningKeyResponse(key: try await stores.keyRing.rotate(realmID: request.parameter("realm"),
                                                                                      context: context)))
    }
}

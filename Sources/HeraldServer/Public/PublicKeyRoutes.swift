import HTTPServer
import JOSE
import Realms
import TokenIssuer

/// `GET /api/oauth/:realm/jwks.json`: the realm's published signing keys. Unknown and
/// disabled realms answer 404, like every public route of a disabled realm.
struct PublicKeyRoutes: RouteGroup {
    let realms: RealmStore
    let keyRing: SigningKeyRing
    let logger: Logger

    func register(in router: inout Router, endpoint: Endpoint) {
        let realms = realms, keyRing = keyRing, logger = logger
        router.add("GET", "/api/oauth/:realm/jwks.json", endpoint.handler { request in
            let realmID = request.parameter("realm")
            guard let realm = try await realms.enabledRealm(realmID) else { throw APIError.notFound("Realm") }
            let published = try await keyRing.publishedKeys(realmID: realm.id)
            for kid in published.unreadableKids {
                logger.warning("signing_key_unreadable", ["realm": .string(realm.id), "kid": .string(kid)])
            }
            let document = JWKSet.document(published.keys)
            // Short caching: verifiers refetch on an unknown kid anyway, and rotation publishes
            // the new key before it signs anything it cannot verify.
            return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json"),
                                                                   ("Cache-Control", "public, max-age=300")]),
                                body: document)
        })
    }
}

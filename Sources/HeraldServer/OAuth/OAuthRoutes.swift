import Grants
import HTTPServer
import JOSE
import Realms
import TokenIssuer

/// The OAuth / OIDC protocol routes of a realm for third-party backends: discovery,
/// authorize (code + PKCE), token, userinfo, revoke, introspect.
struct OAuthRoutes: RouteGroup {
    let context: HeraldContext

    func register(in router: inout Router, endpoint: Endpoint) {
        let context = self.context
        let realms = RealmStore(database: context.database, now: context.now)
        let sessionRevoker = SessionRevoker(now: context.now)
        let clients = ClientAppStore(database: context.database, sessionRevoker: sessionRevoker, now: context.now)
        let authorize = AuthorizeEndpoint(context: context, realms: realms, clients: clients,
                                          downstream: DownstreamAuthorizations(database: context.database, now: context.now))
        router.add("GET", "/api/oauth/:realm/authorize", endpoint.handler { request in
            try await authorize.handle(request)
        })
        let authenticator = ClientAuthenticator(clients: clients)
        let token = TokenEndpoint(context: context, realms: realms, authenticator: authenticator)
        router.add("POST", "/api/oauth/:realm/token", endpoint.handler { request in
            try await token.handle(request)
        })
        let userinfo = UserinfoEndpoint(context: context, realms: realms,
                                        accounts: AccountStore(database: context.database, sessionRevoker: sessionRevoker,
                                                              deletionHook: context.appleTokens, now: context.now))
        for method in ["GET", "POST"] {
            router.add(method, "/api/oauth/:realm/userinfo", endpoint.handler { request in
                try await userinfo.handle(request)
            })
        }
        let inspection = TokenInspection(context: context, realms: realms, authenticator: authenticator)
        router.add("POST", "/api/oauth/:realm/revoke", endpoint.handler { request in
            try await inspection.revoke(request)
        })
        router.add("POST", "/api/oauth/:realm/introspect", endpoint.handler { request in
            try await inspection.introspect(request)
        })
        let keyRing = SigningKeyRing(database: context.database, masterKey: context.masterKey, now: context.now)
        router.add("GET", "/api/oauth/:realm/.well-known/openid-configuration", endpoint.handler { request in
            guard let realm = try await realms.enabledRealm(request.parameter("realm")) else {
                throw APIError.notFound("Realm")
            }
            // An unreadable key is logged where the JWKS is served (PublicKeyRoutes), not here too.
            let algorithms = try await keyRing.publishedKeys(realmID: realm.id).keys.compactMap(\.alg)
            var response = HTTPResponse.json(DiscoveryDocument.document(issuer: context.issuers.issuer(realmID: realm.id), realm: realm,
                                                                        publishedAlgorithms: algorithms))
            response.headers.set("Cache-Control", "public, max-age=300")
            return response
        })
    }
}

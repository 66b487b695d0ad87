import Grants
import HTTPServer
import JOSE
import Login
import Realms
import TokenIssuer

/// The OAuth / OIDC protocol routes of a realm for third-party backends: discovery,
/// authorize (code + PKCE), token, userinfo, revoke, introspect.
struct OAuthRoutes: RouteGroup {
    let realms: RealmStore
    let oauthSettings: OAuthSettingsMemory
    let clients: ClientAppStore
    let accounts: AccountStore
    let downstream: DownstreamAuthorizations
    let keyRing: SigningKeyRing
    let issuers: RealmIssuers
    let sessions: SessionStore
    let accessTokens: AccessTokenVerifier
    let codeExchange: AuthorizationCodeExchange
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    func register(in router: inout Router, endpoint: Endpoint) {
        let realms = realms, keyRing = keyRing, issuers = issuers
        let authorize = AuthorizeEndpoint(realms: realms, oauthSettings: oauthSettings, clients: clients, downstream: downstream,
                                          issuers: issuers, requestLimiter: requestLimiter, clientAddresses: clientAddresses,
                                          logger: logger)
        router.add("GET", "/api/oauth/:realm/authorize", endpoint.handler { request in
            try await authorize.handle(request)
        })
        let authenticator = ClientAuthenticator(clients: clients)
        let token = TokenEndpoint(realms: realms, oauthSettings: oauthSettings, authenticator: authenticator,
                                  codeExchange: codeExchange, sessions: sessions,
                                  requestLimiter: requestLimiter, clientAddresses: clientAddresses, logger: logger)
        router.add("POST", "/api/oauth/:realm/token", endpoint.handler { request in
            try await token.handle(request)
        })
        let userinfo = UserinfoEndpoint(realms: realms, accounts: accounts, accessTokens: accessTokens)
        for method in ["GET", "POST"] {
            router.add(method, "/api/oauth/:realm/userinfo", endpoint.handler { request in
                try await userinfo.handle(request)
            })
        }
        let inspection = TokenInspection(realms: realms, authenticator: authenticator, issuers: issuers, sessions: sessions,
                                         accessTokens: accessTokens, requestLimiter: requestLimiter,
                                         clientAddresses: clientAddresses, logger: logger)
        router.add("POST", "/api/oauth/:realm/revoke", endpoint.handler { request in
            try await inspection.revoke(request)
        })
        router.add("POST", "/api/oauth/:realm/introspect", endpoint.handler { request in
            try await inspection.introspect(request)
        })
        router.add("GET", "/api/oauth/:realm/.well-known/openid-configuration", endpoint.handler { request in
            guard let realm = try await realms.enabledRealm(request.parameter("realm")) else {
                throw APIError.notFound("Realm")
            }
            // An unreadable key is logged where the JWKS is served (PublicKeyRoutes), not here too.
            let algorithms = try await keyRing.publishedKeys(realmID: realm.id).keys.compactMap(\.alg)
            var response = HTTPResponse.json(DiscoveryDocument.document(issuer: issuers.issuer(realmID: realm.id), realm: realm,
                                                                        publishedAlgorithms: algorithms))
            response.headers.set("Cache-Control", "public, max-age=300")
            return response
        })
    }
}

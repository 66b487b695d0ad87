import Grants
import HTTPServer
import JOSE
import Realms
import TokenIssuer

/// `GET /api/oauth/:realm/authorize`: validates a third-party backend's code + PKCE request,
/// records it as pending under its `state`, and sends the browser to the realm's login page
/// (or, with `Accept: application/json`, answers the downstream state for a native app).
struct AuthorizeEndpoint: Sendable {
    let realms: RealmStore
    let clients: ClientAppStore
    let downstream: DownstreamAuthorizations
    let issuers: RealmIssuers
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        guard let realm = try await realms.enabledRealm(realmID) else { throw APIError.notFound("Realm") }
        let issuer = issuers.issuer(realmID: realm.id)
        let wantsJSON = request.acceptsJSON
        // Counted before the request is validated (an invalid one costs a request too), under
        // the client id as presented; answered without a redirect, as the redirect URI is unchecked.
        let query = request.queryItems()
        if let retryAfter = try await requestLimiter.admit(
            realmID: realm.id, endpoint: .authorize, clientIP: clientAddresses.clientAddress(of: request),
            clientID: query.first { $0.name == "client_id" }?.value) {
            logger.info("rate_limited", ["realm": .string(realm.id), "endpoint": "authorize",
                                         "requestId": .string(request.requestID)])
            return OAuthErrorResponse.rateLimited(retryAfter: retryAfter)
        }
        let clients = self.clients
        let validation = try await AuthorizationRequest.validate(query) { clientID in
            try await clients.client(realmID: realm.id, clientID: clientID)
        }
        func redirectedError(_ error: GrantsError, _ redirectURI: String, _ state: String?) -> HTTPResponse {
            if wantsJSON {
                var extra: [String: JSONValue] = ["iss": .string(issuer)]
                if let state { extra["state"] = .string(state) }
                return OAuthErrorResponse.json(error, realmID: realm.id, status: 400, extra: extra)
            }
            return OAuthErrorResponse.redirect(error, redirectURI: redirectURI, state: state, issuer: issuer)
        }
        switch validation {
        case .rejected(let error):
            return OAuthErrorResponse.json(error, realmID: realm.id, status: 400)
        case .redirectedError(let error, let redirectURI, let state):
            return redirectedError(error, redirectURI, state)
        case .accepted(let authorization):
            // Without a login page there is nowhere to send a browser; native apps can still
            // use the JSON variant.
            if !wantsJSON && realm.loginUrl == nil {
                return redirectedError(GrantsError(.serverError, "the realm has no loginUrl; request with Accept: application/json"),
                                       authorization.redirectURI, authorization.state)
            }
            let pending: PendingAuthorization
            do {
                pending = try await downstream.begin(realmID: realm.id, authorization)
            } catch let error as GrantsError {
                return redirectedError(error, authorization.redirectURI, authorization.state)
            }
            if wantsJSON {
                return HTTPResponse.json(JSONValue.object(["downstreamState": .string(pending.downstreamState),
                                                           "expiresIn": .number(Double(pending.expiresIn))]),
                                         noStore: true)
            }
            return OAuthErrorResponse.found(RedirectURI.appending([("downstreamState", pending.downstreamState)],
                                                                  to: realm.loginUrl ?? ""))
        }
    }
}

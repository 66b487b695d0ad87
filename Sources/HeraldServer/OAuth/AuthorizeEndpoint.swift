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
    let oauthSettings: OAuthSettingsMemory
    let clients: ClientAppStore
    let downstream: DownstreamAuthorizations
    let issuers: RealmIssuers
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        // Remembered on this node, or read: the pending authorization's write checks it is still
        // current, and a refusal is decided again on what is stored.
        guard let settings = try await oauthSettings.enabledRealm(request.parameter("realm"), in: realms) else {
            throw APIError.notFound("Realm")
        }
        let realmID = settings.realm.id
        // Counted before the request is validated (an invalid one costs a request too), under
        // the client id as presented; answered without a redirect, as the redirect URI is unchecked.
        let query = request.queryItems()
        if let retryAfter = try await requestLimiter.admit(
            realmID: realmID, endpoint: .authorize, clientIP: clientAddresses.clientAddress(of: request),
            clientID: query.first { $0.name == "client_id" }?.value) {
            logger.info("rate_limited", ["realm": .string(realmID), "endpoint": "authorize",
                                         "requestId": .string(request.requestID)])
            return OAuthErrorResponse.rateLimited(retryAfter: retryAfter)
        }
        do {
            return try await oauthSettings.withCurrentSettings(from: settings, in: realms) { current in
                try await authorize(query, settings: current, wantsJSON: request.acceptsJSON)
            }
        } catch let error as TokenError where error.code == .settingsChanged {
            // The realm changed twice while one request ran: nothing was recorded; answered as
            // an unreachable database is here (503, `Retry-After`), so the client tries again.
            throw APIError.storageUnavailable
        }
    }

    /// Validates and records the request under `settings`. A refusal decided on remembered
    /// settings throws `TokenError(.settingsChanged)`, so it is decided once more on what is
    /// stored; so does a recorded request whose write found the realm's stamp changed.
    private func authorize(_ query: [(name: String, value: String)], settings: OAuthSettingsMemory.RememberedRealm,
                           wantsJSON: Bool) async throws -> HTTPResponse {
        let realm = settings.realm
        let issuer = issuers.issuer(realmID: realm.id)
        func refused(_ response: HTTPResponse) throws -> HTTPResponse {
            guard settings.isReadNow else { throw TokenError(.settingsChanged) }
            return response
        }
        let clients = self.clients, oauthSettings = self.oauthSettings
        let validation = try await AuthorizationRequest.validate(query) { clientID in
            try await oauthSettings.namedClient(realmID: realm.id, clientID: clientID, stamp: settings.stamp) {
                try await clients.client(realmID: realm.id, clientID: clientID)
            }
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
            return try refused(OAuthErrorResponse.json(error, realmID: realm.id, status: 400))
        case .redirectedError(let error, let redirectURI, let state):
            return try refused(redirectedError(error, redirectURI, state))
        case .accepted(let authorization):
            // Without a login page there is nowhere to send a browser; native apps can still
            // use the JSON variant.
            if !wantsJSON && realm.loginUrl == nil {
                return try refused(redirectedError(
                    GrantsError(.serverError, "the realm has no loginUrl; request with Accept: application/json"),
                    authorization.redirectURI, authorization.state))
            }
            let pending: PendingAuthorization
            do {
                switch try await downstream.begin(realmID: realm.id, authorization, settingsStamp: settings.stamp) {
                case .pending(let recorded): pending = recorded
                case .settingsChanged: throw TokenError(.settingsChanged)
                }
            } catch let error as GrantsError {
                // Decided by the write on what is stored (the state is already pending).
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

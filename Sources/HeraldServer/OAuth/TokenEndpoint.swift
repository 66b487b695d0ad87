import Grants
import HTTPServer
import JOSE
import Login
import Realms
import TokenIssuer
import Storage

/// `POST /api/oauth/:realm/token`: the `authorization_code` (with S256 PKCE) and
/// `refresh_token` grants for third-party backends, after client authentication.
struct TokenEndpoint: Sendable {
    let realms: RealmStore
    let oauthSettings: OAuthSettingsMemory
    let authenticator: ClientAuthenticator
    let codeExchange: AuthorizationCodeExchange
    let sessions: SessionStore
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        // Remembered on this node, or read: each grant's write checks it is still current.
        guard let settings = try await oauthSettings.enabledRealm(request.parameter("realm"), in: realms) else {
            throw APIError.notFound("Realm")
        }
        let realm = settings.realm
        do {
            // Counted before authentication, so guessing client secrets is limited too.
            let admitted: ClientAuthenticatedRequest
            switch try await ClientAuthenticatedRequest.admit(request, realmID: realm.id, endpoint: .token, limiter: requestLimiter,
                                                              clientAddresses: clientAddresses, logger: logger) {
            case .admitted(let request): admitted = request
            case .limited(let response): return response
            }
            let body = admitted.body, clientIP = admitted.clientIP
            let issued: IssuedTokens
            switch body["grant_type"] {
            case "authorization_code"?:
                issued = try await authorizationCode(body, settings: settings, credentials: admitted.credentials,
                                                     clientIP: clientIP)
            case "refresh_token"?:
                issued = try await refresh(body, settings: settings, credentials: admitted.credentials, clientIP: clientIP)
            case nil:
                _ = try await authenticator.authenticate(realmID: realm.id, admitted.credentials)
                throw GrantsError(.invalidRequest, "grant_type is required")
            default:
                _ = try await authenticator.authenticate(realmID: realm.id, admitted.credentials)
                throw GrantsError(.unsupportedGrantType, "grant_type must be authorization_code or refresh_token")
            }
            var object: [String: JSONValue] = [
                "access_token": .string(issued.accessToken), "token_type": "Bearer",
                "expires_in": .number(Double(issued.expiresIn)), "refresh_token": .string(issued.refreshToken),
                "refresh_expires_in": .number(Double(issued.refreshExpiresIn)),
                "scope": .string(Scope.format(issued.scope)),
            ]
            if let idToken = issued.idToken { object["id_token"] = .string(idToken) }
            return HTTPResponse.json(JSONValue.object(object), noStore: true)
        } catch let error as GrantsError {
            logger.info("token_refused", ["realm": .string(realm.id), "error": .string(error.oauthError),
                                          "requestId": .string(request.requestID)])
            return OAuthErrorResponse.json(error, realmID: realm.id)
        } catch let error as StorageError where error.isTemporary {
            return OAuthErrorResponse.json(.storageUnavailable, realmID: realm.id)
        }
    }

    /// The code grant, from the realm and client this node remembers when it can (the
    /// exchange's write checks the realm's stamp, and a changed realm starts once more from
    /// what is stored, the code still unburnt).
    private func authorizationCode(_ body: OAuthRequestBody, settings: OAuthSettingsMemory.RememberedRealm,
                                   credentials: ClientCredentials, clientIP: String) async throws -> IssuedTokens {
        let client = try await authenticated(credentials, settings: settings)
        let code = try body.required("code")
        let redirectURI = try body.required("redirect_uri")
        let verifier = try body.required("code_verifier")
        guard PKCE.isValidVerifier(verifier) else {
            throw GrantsError(.invalidRequest, "code_verifier must be 43-128 characters of [A-Za-z0-9-._~]")
        }
        // One write transaction (Login): the code burns, the session starts and is recorded on it.
        let outcome: AuthorizationCodeExchange.Outcome
        do {
            outcome = try await withCurrentSettings(from: settings, client: client, credentials: credentials) { current, client in
                try await codeExchange.exchange(realm: current.realm, client: client, code: code, redirectURI: redirectURI,
                                                codeVerifier: verifier, clientIP: clientIP, settingsStamp: current.stamp)
            }
        } catch let error as TokenError where error.code == .settingsChanged {
            // The realm changed twice while one exchange ran: nothing changed, try again.
            throw GrantsError.storageUnavailable
        }
        switch outcome {
        case .issued(let issued):
            return issued
        case .replayed:
            logger.warning("authorization_code_replayed", ["realm": .string(settings.realm.id),
                                                           "client": .string(client.clientId)])
            throw GrantsError(.invalidGrant, "authorization code was already used")
        }
    }

    /// The refresh grant, from the remembered realm and client as the code grant above.
    private func refresh(_ body: OAuthRequestBody, settings: OAuthSettingsMemory.RememberedRealm,
                         credentials: ClientCredentials, clientIP: String) async throws -> IssuedTokens {
        // Authentication comes first, as for every grant (a bad client is `invalid_client`
        // whatever else is wrong); it is done again only from changed settings.
        let client = try await authenticated(credentials, settings: settings)
        let refreshToken = try body.required("refresh_token")
        var scope: [String]?
        if let text = body["scope"] {
            guard let parsed = Scope.parse(text), !parsed.isEmpty else { throw GrantsError(.invalidScope, "scope is malformed") }
            scope = parsed
        }
        do {
            return try await withCurrentSettings(from: settings, client: client, credentials: credentials) { current, client in
                try await sessions.refresh(realmID: current.realm.id, presenter: .authenticatedClient(client),
                                           refreshToken: refreshToken, scope: scope, clientIP: clientIP,
                                           settingsStamp: current.stamp)
            }
        } catch let error as TokenError {
            throw GrantsError(refreshFailure: error)
        }
    }

    /// Runs a grant's write from `settings` with `client` (authenticated under them), and once more
    /// from stored settings, the client authenticated again, when the realm's stamp changed
    /// meanwhile (`OAuthSettingsMemory.withCurrentSettings`).
    private func withCurrentSettings<T>(from settings: OAuthSettingsMemory.RememberedRealm, client: ClientApp,
                                        credentials: ClientCredentials,
                                        _ write: (OAuthSettingsMemory.RememberedRealm, ClientApp) async throws -> T)
        async throws -> T {
        try await oauthSettings.withCurrentSettings(from: settings, in: realms) { current in
            try await write(current, current.stamp == settings.stamp ? client : try await authenticated(credentials, settings: current))
        }
    }

    /// The client the credentials prove: remembered under the realm's stamp, or authenticated
    /// by what is stored (and then remembered).
    private func authenticated(_ credentials: ClientCredentials, settings: OAuthSettingsMemory.RememberedRealm)
        async throws -> ClientApp {
        let realmID = settings.realm.id
        if let client = oauthSettings.client(realmID: realmID, credentials, stamp: settings.stamp) { return client }
        let client = try await authenticator.authenticate(realmID: realmID, credentials)
        oauthSettings.remember(client, authenticatedBy: credentials, realmID: realmID, stamp: settings.stamp)
        return client
    }
}

extension GrantsError {
    /// The token endpoint's answer for a refused refresh (the session API's is `APIError(refreshFailure:)`):
    /// only a token at fault is `invalid_grant`, which tells the client to drop it; our own
    /// failures are `server_error`, an unreachable database `temporarily_unavailable`.
    init(refreshFailure error: TokenError) {
        switch error.code {
        case .invalidScope: self = GrantsError(.invalidScope, "scope is wider than the granted scope")
        case .noSigningKey: self = GrantsError(.serverError, "the realm cannot sign tokens")
        case .storageFailure: self = GrantsError(.serverError, "the refresh could not be completed")
        // The realm changed twice while one refresh ran: nothing changed, try again.
        case .storageUnavailable, .settingsChanged: self = .storageUnavailable
        case .reuseDetected: self = GrantsError(.invalidGrant, "refresh token was already used; the session is revoked")
        case .invalidGrant, .expired, .idleExpired, .revoked, .clientMismatch, .clientNotAllowed, .ipMismatch, .accountDisabled,
             .accountDeleted:
            self = GrantsError(.invalidGrant, "refresh token is invalid, expired or revoked")
        }
    }
}

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
    let authenticator: ClientAuthenticator
    let codeExchange: AuthorizationCodeExchange
    let sessions: SessionStore
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let realm = try await realms.enabledRealm(request.parameter("realm")) else { throw APIError.notFound("Realm") }
        do {
            // Counted before authentication, so guessing client secrets is limited too.
            let admitted: ClientAuthenticatedRequest
            switch try await ClientAuthenticatedRequest.admit(request, realmID: realm.id, endpoint: .token, limiter: requestLimiter,
                                                              clientAddresses: clientAddresses, logger: logger) {
            case .admitted(let request): admitted = request
            case .limited(let response): return response
            }
            let body = admitted.body, clientIP = admitted.clientIP
            let client = try await authenticator.authenticate(realmID: realm.id, admitted.credentials)
            let issued: IssuedTokens
            switch body["grant_type"] {
            case "authorization_code"?:
                issued = try await authorizationCode(body, realm: realm, client: client, clientIP: clientIP)
            case "refresh_token"?:
                issued = try await refresh(body, realm: realm, client: client, clientIP: clientIP)
            case nil:
                throw GrantsError(.invalidRequest, "grant_type is required")
            default:
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

    private func authorizationCode(_ body: OAuthRequestBody, realm: Realm, client: ClientApp,
                                   clientIP: String) async throws -> IssuedTokens {
        let code = try body.required("code")
        let redirectURI = try body.required("redirect_uri")
        let verifier = try body.required("code_verifier")
        guard PKCE.isValidVerifier(verifier) else {
            throw GrantsError(.invalidRequest, "code_verifier must be 43-128 characters of [A-Za-z0-9-._~]")
        }
        // One write transaction (Login): the code burns, the session starts and is recorded on it.
        switch try await codeExchange.exchange(realm: realm, client: client, code: code, redirectURI: redirectURI,
                                               codeVerifier: verifier, clientIP: clientIP) {
        case .issued(let issued):
            return issued
        case .replayed:
            logger.warning("authorization_code_replayed", ["realm": .string(realm.id),
                                                           "client": .string(client.clientId)])
            throw GrantsError(.invalidGrant, "authorization code was already used")
        }
    }

    private func refresh(_ body: OAuthRequestBody, realm: Realm, client: ClientApp,
                         clientIP: String) async throws -> IssuedTokens {
        let refreshToken = try body.required("refresh_token")
        var scope: [String]?
        if let text = body["scope"] {
            guard let parsed = Scope.parse(text), !parsed.isEmpty else { throw GrantsError(.invalidScope, "scope is malformed") }
            scope = parsed
        }
        do {
            return try await sessions.refresh(realmID: realm.id, presenter: .authenticatedClient(client),
                                            refreshToken: refreshToken, scope: scope, clientIP: clientIP)
        } catch {
            throw GrantsError(refreshFailure: error)
        }
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
        case .storageUnavailable: self = .storageUnavailable
        case .reuseDetected: self = GrantsError(.invalidGrant, "refresh token was already used; the session is revoked")
        case .invalidGrant, .expired, .idleExpired, .revoked, .clientMismatch, .clientNotAllowed, .ipMismatch, .accountDisabled,
             .accountDeleted:
            self = GrantsError(.invalidGrant, "refresh token is invalid, expired or revoked")
        }
    }
}

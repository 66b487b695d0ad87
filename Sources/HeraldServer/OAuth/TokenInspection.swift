import Grants
import HTTPServer
import JOSE
import Realms
import Storage
import TokenIssuer

/// `POST /api/oauth/:realm/revoke` (RFC 7009) and `POST /api/oauth/:realm/introspect`
/// (RFC 7662). Both count the request against their own budget (as `/token` does), then
/// authenticate the client; both look the token up as an access token
/// and as a refresh token (the hint only changes the order). A database that cannot be read
/// is `temporarily_unavailable` (503), never an inactive or unknown token.
struct TokenInspection: Sendable {
    let realms: RealmStore
    let authenticator: ClientAuthenticator
    let issuers: RealmIssuers
    let sessions: SessionStore
    let accessTokens: AccessTokenVerifier
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    let logger: Logger

    /// What a presented token turned out to be.
    private enum Found {
        case access(AccessTokenClaims)
        case refresh(RefreshTokenSession)
        case none
    }

    /// RFC 7009: revokes the session behind a refresh or access token the client owns.
    /// Always 200 once the client is authenticated (unknown and foreign tokens included).
    func revoke(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let realm = try await realms.enabledRealm(request.parameter("realm")) else { throw APIError.notFound("Realm") }
        do {
            let admitted: ClientAuthenticatedRequest
            switch try await ClientAuthenticatedRequest.admit(request, realmID: realm.id, endpoint: .revoke, limiter: requestLimiter,
                                                              clientAddresses: clientAddresses, logger: logger) {
            case .admitted(let request): admitted = request
            case .limited(let response): return response
            }
            let body = admitted.body
            let client = try await authenticate(admitted, realm: realm, confidentialOnly: false)
            let token = try body.required("token")
            switch try await find(token, realm: realm, hint: body["token_type_hint"], activeOnly: false) {
            case .access(let claims) where claims.clientID == client.clientId:
                try await sessions.revokeSession(realmID: realm.id, sessionID: claims.sessionID)
            case .refresh(let session) where session.clientID == client.clientId:
                try await sessions.revokeSession(realmID: realm.id, sessionID: session.sessionID)
            default:
                break  // RFC 7009 §2.2: invalid tokens do not cause an error.
            }
            var response = HTTPResponse(status: 200)
            response.headers.set("Cache-Control", "no-store")
            response.headers.set("Pragma", "no-cache")
            return response
        } catch let error as GrantsError {
            return OAuthErrorResponse.json(error, realmID: realm.id)
        } catch let error as StorageError where error.isTemporary {
            return OAuthErrorResponse.json(.storageUnavailable, realmID: realm.id)
        }
    }

    /// RFC 7662: any confidential client of the realm may introspect any token of the realm.
    func introspect(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let realm = try await realms.enabledRealm(request.parameter("realm")) else { throw APIError.notFound("Realm") }
        do {
            let admitted: ClientAuthenticatedRequest
            switch try await ClientAuthenticatedRequest.admit(request, realmID: realm.id, endpoint: .introspect, limiter: requestLimiter,
                                                              clientAddresses: clientAddresses, logger: logger) {
            case .admitted(let request): admitted = request
            case .limited(let response): return response
            }
            let body = admitted.body
            _ = try await authenticate(admitted, realm: realm, confidentialOnly: true)
            let token = try body.required("token")
            let issuer = issuers.issuer(realmID: realm.id)
            let object: [String: JSONValue]
            switch try await find(token, realm: realm, hint: body["token_type_hint"], activeOnly: true) {
            case .access(let claims):
                object = ["active": true, "scope": .string(Scope.format(claims.scope)), "client_id": .string(claims.clientID),
                          "sub": .string(claims.sub), "exp": .number(Double(claims.exp)), "iat": .number(Double(claims.iat)),
                          "token_type": "Bearer", "iss": .string(issuer), "aud": .string(claims.clientID),
                          "sid": .string(claims.sessionID), "jti": .string(claims.jti)]
            case .refresh(let session):
                object = ["active": true, "scope": .string(Scope.format(session.scope)), "client_id": .string(session.clientID),
                          "sub": .string(session.accountID), "exp": .number(Double(session.expiresAt)),
                          "iat": .number(Double(session.issuedAt)), "token_type": "refresh_token", "iss": .string(issuer),
                          "aud": .string(session.clientID), "sid": .string(session.sessionID)]
            case .none:
                object = ["active": false]
            }
            return HTTPResponse.json(JSONValue.object(object), noStore: true)
        } catch let error as GrantsError {
            return OAuthErrorResponse.json(error, realmID: realm.id)
        } catch let error as StorageError where error.isTemporary {
            return OAuthErrorResponse.json(.storageUnavailable, realmID: realm.id)
        }
    }

    /// The client of an admitted request (counted first, so secret guessing is limited here as
    /// at `/token`, each endpoint with a budget of its own).
    private func authenticate(_ request: ClientAuthenticatedRequest, realm: Realm,
                              confidentialOnly: Bool) async throws -> ClientApp {
        if confidentialOnly && request.credentials.secret == nil {
            throw GrantsError(.invalidClient, "client authentication failed")
        }
        return try await authenticator.authenticate(realmID: realm.id, request.credentials)
    }

    /// The token as an access token (valid only) or a refresh token of the realm.
    /// `activeOnly` drops refresh tokens that are rotated, revoked or expired.
    private func find(_ token: String, realm: Realm, hint: String?, activeOnly: Bool) async throws -> Found {
        func asAccess() async throws -> Found {
            if case .valid(let claims) = try await accessTokens.validate(token, realmID: realm.id) {
                return .access(claims)
            }
            return .none
        }
        func asRefresh() async throws -> Found {
            guard let session = try await sessions.session(ofRefreshToken: token, realmID: realm.id),
          session.isActive || !activeOnly else { return .none }
            return .refresh(session)
        }
        let accessFirst = hint != "refresh_token" && token.split(separator: ".").count == 3
        let first = accessFirst ? try await asAccess() : try await asRefresh()
        if case .none = first { return accessFirst ? try await asRefresh() : try await asAccess() }
        return first
    }
}

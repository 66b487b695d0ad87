import Foundation
import HTTPServer
import JOSE
import Realms
import TokenIssuer

/// The first-party session API under `/api/auth/:realm`: refresh (rotation), logout, me. It
/// serves public first-party apps only (`ClientStanding.usesSessionAPI`), as their client is
/// checked at each use: a confidential client refreshes at `/token` with its authentication,
/// and a third-party client reads `/userinfo`, which applies its token's scope. Anything else
/// answers 403 `client_not_allowed` and changes nothing. The one exception is `DELETE /me`
/// (`SessionRoutes+DeleteMe.swift`), which another client's token may use when its scope holds
/// `account:delete`.
///
/// The handlers are static and take the group as `context`: what it holds is all they use.
struct SessionRoutes: RouteGroup {
    let realms: RealmStore
    let oauthSettings: OAuthSettingsMemory
    let accounts: AccountStore
    let sessions: SessionStore
    let accessTokens: AccessTokenVerifier
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    /// The owner's `DELETE /me` (the admin delete's path).
    let accountDeletions: AccountDeletions
    let logger: Logger
    let now: @Sendable () -> Date

    func register(in router: inout Router, endpoint: Endpoint) {
        let context = self
        router.add("POST", "/api/auth/:realm/session/refresh", endpoint.handler { request in
            try await Self.refresh(request, context: context)
        })
        router.add("POST", "/api/auth/:realm/session/logout", endpoint.handler { request in
            try await Self.logout(request, context: context)
        })
        router.add("GET", "/api/auth/:realm/me", endpoint.handler { request in
            try await Self.me(request, context: context)
        })
        router.add("DELETE", "/api/auth/:realm/me", endpoint.handler { request in
            try await Self.deleteMe(request, context: context)
        })
    }

    static func refresh(_ request: HTTPRequest, context: SessionRoutes) async throws -> HTTPResponse {
        // Remembered on this node, or read; the refresh's write checks it is still current.
        guard let settings = try await context.oauthSettings.enabledRealm(request.parameter("realm"), in: context.realms)
        else { throw APIError.notFound("Realm") }
        let realm = settings.realm
        var body = try JSONRequestBody(request)
        let token = body.string("refreshToken", required: true, maxLength: 512)
        let clientID = body.string("clientId", required: true, maxLength: 128)
        try body.validate()
        guard let token, let clientID else { throw APIError.badRequest("Invalid request") }
        let tokens: IssuedTokens
        let clientIP = context.clientAddresses.clientAddress(of: request)
        if let retryAfter = try await context.requestLimiter.admit(realmID: realm.id, endpoint: .sessionRefresh,
                                                                   clientIP: clientIP, clientID: clientID) {
            context.logger.info("rate_limited", ["realm": .string(realm.id), "endpoint": "session_refresh",
                                                 "requestId": .string(request.requestID)])
            throw APIError.tooManyRequests(retryAfter: retryAfter)
        }
        // The refresh reads the session's client with the token (no read of its own here):
        // an unknown client id is a client mismatch, a disabled or deleted one a revoked
        // session, a confidential or third-party one `client_not_allowed`.
        do {
            tokens = try await context.oauthSettings.withCurrentSettings(from: settings, in: context.realms) { settings in
                try await context.sessions.refresh(realmID: realm.id, presenter: .sessionAPI(clientID: clientID),
                                                   refreshToken: token, scope: nil, clientIP: clientIP,
                                                   settingsStamp: settings.stamp)
            }
        } catch let error as TokenError {
            throw APIError(refreshFailure: error)
        }
        return .json(body: try SessionTokensResponse(message: "Token refreshed", tokens: tokens, isNewUser: false).body,
                     noStore: true)
    }

    static func logout(_ request: HTTPRequest, context: SessionRoutes) async throws -> HTTPResponse {
        let realm = try await enabledRealm(request, context: context)
        let claims = try await authenticate(request, realmID: realm.id, context: context)
        var refreshToken: String?
        if !request.body.isEmpty {
            var body = try JSONRequestBody(request)
            refreshToken = body.string("refreshToken", maxLength: 512)
            try body.validate()
        }
        try await context.sessions.revokeSession(realmID: realm.id, sessionID: claims.sessionID)
        // Holding a refresh token is holding its session, so revoking the one presented is safe
        // even when it belongs to another session of the app.
        if let refreshToken, let other = try await context.sessions.sessionID(ofRefreshToken: refreshToken, realmID: realm.id),
           other != claims.sessionID {
            try await context.sessions.revokeSession(realmID: realm.id, sessionID: other)
        }
        return .json(["message": "Logged out"], noStore: true)
    }

    static func me(_ request: HTTPRequest, context: SessionRoutes) async throws -> HTTPResponse {
        let realm = try await enabledRealm(request, context: context)
        let claims = try await authenticate(request, realmID: realm.id, context: context)
        let accounts = context.accounts
        guard let account = try await accounts.account(realmID: realm.id, id: claims.sub) else {
            throw APIError.accountDeleted
        }
        let identities = try await accounts.identities(realmID: realm.id, accountID: account.id)
        return .json(body: MeResponse(AccountProfile(account: account, identities: identities)).body, noStore: true)
    }

    static func enabledRealm(_ request: HTTPRequest, context: SessionRoutes) async throws -> Realm {
        guard let realm = try await context.realms.enabledRealm(request.parameter("realm")) else {
            throw APIError.notFound("Realm")
        }
        return realm
    }

    /// The valid access token of a client the session API serves, or the contract's 401/403
    /// for why it is not one.
    static func authenticate(_ request: HTTPRequest, realmID: String, context: SessionRoutes) async throws -> AccessTokenClaims {
        guard let token = BearerAuthorization.token(in: request) else {
            throw APIError.unauthorized
        }
        let validation = try await context.accessTokens.validate(token, realmID: realmID, requiring: .sessionAPIClient)
        if case .valid(let claims) = validation { return claims }
        throw try await refusal(validation, token: token, realmID: realmID, context: context)
    }

    /// The contract's 401/403 for a token `validate` did not find valid.
    static func refusal(_ validation: AccessTokenValidation, token: String, realmID: String,
                        context: SessionRoutes) async throws -> APIError {
        switch validation {
        case .valid:
            // Not a refusal: callers take a valid token before asking.
            return .internalError
        case .invalid:
            // Only now, on the failure path, look at what else it might be: an app that sends
            // its ID or refresh token has a bug to fix, not a person to sign out. Admin tokens
            // are never looked up here: this public route must not tell anyone whether a string
            // is a live admin token (issue #38), so one is simply not a session token.
            if let kind = try await context.accessTokens.misusedTokenKind(token, realmID: realmID) {
                return .wrongTokenType(presented: kind == .idToken ? "id_token" : "refresh_token")
            }
            return .invalidAccessToken
        case .clientNotAllowed: return .sessionAPIClientNotAllowed
        case .expired: return .tokenExpired
        case .revoked: return .tokenRevoked
        case .accountDisabled: return .accountDisabled
        case .accountDeleted: return .accountDeleted
        }
    }
}

extension APIError {
    private static let bearerChallenge = [("WWW-Authenticate", #"Bearer error="invalid_token""#)]
    static let invalidAccessToken = APIError(status: 401, code: "unauthorized", message: "Invalid access token",
                                             headers: bearerChallenge)
    static let tokenExpired = APIError(status: 401, code: "token_expired", message: "The token has expired",
                                       headers: bearerChallenge)
    static let tokenRevoked = APIError(status: 401, code: "token_revoked", message: "The token has been revoked",
                                       headers: bearerChallenge)
    static let accountDeleted = APIError(status: 401, code: "account_deleted", message: "The account has been deleted",
                                         headers: bearerChallenge)
    /// Another of the realm's session credentials where an access token belongs; `presented`
    /// (`id_token`, `refresh_token`) names which, never the token.
    static func wrongTokenType(presented: String) -> APIError {
        APIError(status: 401, code: "wrong_token_type", message: "Not an access token: send the access token",
                 details: ["presented": .string(presented)], headers: bearerChallenge)
    }
    /// The session ended by time: past its absolute lifetime, or unused past its idle timeout
    /// (`details.reason` `lifetime` or `idle`). The app signs the person in again.
    static func refreshTokenExpired(reason: String) -> APIError {
        APIError(status: 401, code: "refresh_token_expired", message: "The session has expired",
                 details: ["reason": .string(reason)])
    }
    /// The session was ended (logout, reuse of a rotated refresh token, admin, client change).
    static let refreshTokenRevoked = APIError(status: 401, code: "refresh_token_revoked",
                                              message: "The session has been revoked")
    /// A token of a confidential or third-party client at the first-party session API.
    static let sessionAPIClientNotAllowed = APIError(
        status: 403, code: "client_not_allowed",
        message: "The session API serves public first-party clients only; use the OAuth token and userinfo endpoints")

    /// The session API's answer for a refused refresh.
    init(refreshFailure error: TokenError) {
        switch error.code {
        case .invalidGrant, .clientMismatch, .ipMismatch:
            self = APIError(status: 401, code: "unauthorized", message: "Invalid refresh token")
        case .reuseDetected, .revoked: self = .refreshTokenRevoked
        case .clientNotAllowed: self = .sessionAPIClientNotAllowed
        case .expired: self = .refreshTokenExpired(reason: "lifetime")
        case .idleExpired: self = .refreshTokenExpired(reason: "idle")
        case .accountDisabled: self = .accountDisabled
        case .accountDeleted: self = .accountDeleted
        case .invalidScope: self = .badRequest("Invalid scope")
        case .noSigningKey, .storageFailure: self = .internalError
        // The realm changed twice while one refresh ran: nothing changed, try again.
        case .storageUnavailable, .settingsChanged: self = .storageUnavailable
        }
    }
}

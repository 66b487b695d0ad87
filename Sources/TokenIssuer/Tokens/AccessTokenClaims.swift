/// The verified claims of a Herald access token (RFC 9068).
public struct AccessTokenClaims: Sendable, Equatable {
    public let realmID: String
    /// The account id (`sub`).
    public let sub: String
    /// `client_id` (also the `aud`).
    public let clientID: String
    /// The token's scope, less what its client may no longer be granted (validation caps it
    /// by the client's current `allowedScopes`).
    public let scope: [String]
    /// The session (`sid`).
    public let sessionID: String
    public let exp: Int64
    public let iat: Int64
    public let jti: String
    /// When the person signed in to start the session (`auth_time`, unix seconds): a refresh
    /// keeps it, so it tells how recently someone proved who they are (`DELETE /me` asks).
    /// nil for a token without the claim.
    public let authTime: Int64?

    /// The same claims with `scope` replaced (validation's cap by the client's scopes).
    func scoped(_ scope: [String]) -> AccessTokenClaims {
        AccessTokenClaims(realmID: realmID, sub: sub, clientID: clientID, scope: scope, sessionID: sessionID,
                          exp: exp, iat: iat, jti: jti, authTime: authTime)
    }
}

/// The outcome of validating an access token; the session row decides revocation.
public enum AccessTokenValidation: Sendable, Equatable {
    case valid(AccessTokenClaims)
    /// Not a token of this realm: malformed, bad signature, unknown key, wrong issuer or type.
    case invalid
    case expired
    /// Its session was revoked or ended, or its client was disabled, deleted or re-created.
    case revoked
    /// A valid token whose client the route does not serve (`AccessRequirement`).
    case clientNotAllowed
    case accountDisabled
    /// The token is otherwise valid (signature, expiry, session of this account, live client,
    /// the route's requirement), but its account was deleted since: the claims, with the scope
    /// capped, let a route that must stay idempotent (`DELETE /me`) answer a retry.
    case accountDeleted(AccessTokenClaims)
}

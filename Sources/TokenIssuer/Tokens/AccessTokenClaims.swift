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

    /// The same claims with `scope` replaced (validation's cap by the client's scopes).
    func scoped(_ scope: [String]) -> AccessTokenClaims {
        AccessTokenClaims(realmID: realmID, sub: sub, clientID: clientID, scope: scope, sessionID: sessionID,
                          exp: exp, iat: iat, jti: jti)
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
    case accountDeleted
}

/// The verified claims of a Herald access token (RFC 9068).
public struct AccessTokenClaims: Sendable, Equatable {
    public let realmID: String
    /// The account id (`sub`).
    public let sub: String
    /// `client_id` (also the `aud`).
    public let clientID: String
    public let scope: [String]
    /// The session (`sid`).
    public let sessionID: String
    public let exp: Int64
    public let iat: Int64
    public let jti: String
}

/// The outcome of validating an access token; the session row decides revocation.
public enum AccessTokenValidation: Sendable, Equatable {
    case valid(AccessTokenClaims)
    /// Not a token of this realm: malformed, bad signature, unknown key, wrong issuer or type.
    case invalid
    case expired
    case revoked
    case accountDisabled
    case accountDeleted
}

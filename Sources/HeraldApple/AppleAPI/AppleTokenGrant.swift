/// What Apple's token endpoint returned for an authorization code (only what Herald keeps).
public struct AppleTokenGrant: Sendable, Equatable {
    /// Apple's refresh token: kept encrypted, used only to revoke the authorization.
    public let refreshToken: String?
    /// The ID token of the exchange (the web flow verifies it like a native one).
    public let idToken: String?
}

import Realms

/// One login attempt as a door (the native-login route, the web callback) decoded it. Holds
/// the identity token and raw nonce: never log it.
public struct LoginRequest: Sendable {
    public var realmID: String
    /// The provider's identity token (Apple: `ASAuthorizationAppleIDCredential.identityToken`).
    public var identityToken: String
    public var clientID: String
    /// The raw nonce; the token carries its lowercase hex SHA-256.
    public var rawNonce: String?
    /// Present: complete a pending third-party authorization (branch B).
    public var downstreamState: String?
    /// Only the provider's first authorization returns a name.
    public var fullName: PersonName
    /// The client IP (rate limiting, session IP binding).
    public var clientIP: String

    /// A request as decoded by its door.
    public init(realmID: String, identityToken: String, clientID: String, rawNonce: String?, downstreamState: String?,
                fullName: PersonName = PersonName(), clientIP: String) {
        self.realmID = realmID
        self.identityToken = identityToken
        self.clientID = clientID
        self.rawNonce = rawNonce
        self.downstreamState = downstreamState
        self.fullName = fullName
        self.clientIP = clientIP
    }
}

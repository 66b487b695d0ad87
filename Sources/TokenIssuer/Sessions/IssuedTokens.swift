import Realms

/// The tokens a session start or a refresh hands out. Holds secrets: never log it.
public struct IssuedTokens: Sendable {
    public let sessionID: String
    public let accountID: String
    public let accessToken: String
    /// Seconds until the access token expires.
    public let expiresIn: Int
    public let refreshToken: String
    /// Seconds until the session (refresh family) ends, whatever the rotations.
    public let refreshExpiresIn: Int
    public let scope: [String]
    /// When scope contains "openid".
    public let idToken: String?
    /// The account with its identities as of the issuing transaction, when the caller asked
    /// for it (the first-party session API and native login answer it as `user`); nil else.
    public let profile: AccountProfile?
}

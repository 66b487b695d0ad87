import TokenIssuer

/// A successful login, as the pipeline hands it back to its door: how it ended (branch A or
/// B) and what was established on the way, so the door never reads the token again.
public struct LoginResult: Sendable {
    /// How the login ended.
    public enum Branch: Sendable {
        /// Branch A: the first-party app's own session.
        case session(IssuedTokens)
        /// Branch B: the pending authorization completed; redirect the user agent here.
        case downstream(redirectURI: String)
    }

    public let branch: Branch
    /// The account that logged in.
    public let accountID: String
    /// The account was created by this login.
    public let isNewUser: Bool
    /// The identity token's audience that the verifier matched against the realm's configuration
    /// (Apple: the app's bundle id or the Services ID): the app the provider issued its
    /// credentials to, e.g. the client id an authorization code from the same sign-in is redeemed with.
    public let audience: String

    /// A result of `branch` for `accountID`.
    public init(branch: Branch, accountID: String, isNewUser: Bool, audience: String) {
        self.branch = branch
        self.accountID = accountID
        self.isNewUser = isNewUser
        self.audience = audience
    }
}

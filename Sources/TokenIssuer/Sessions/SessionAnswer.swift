/// Which answer a session's tokens are issued for, which decides what is signed and read
/// besides the access and refresh tokens.
public enum SessionAnswer: Sendable {
    /// The first-party answer (native login branch A, session refresh): it shows the account
    /// (`IssuedTokens.profile`, read in the session's transaction) and has no ID token field, so
    /// none is signed even for an `openid` scope (that signature was about 7 % of a returning
    /// login's CPU in the #15 profile).
    case firstParty
    /// The token endpoint's answer (RFC 6749 / OpenID Connect): an ID token when the scope has
    /// `openid`, no profile.
    case tokenEndpoint

    /// Whether the answer shows the account's profile (its identities are read for it).
    var showsProfile: Bool {
        switch self {
        case .firstParty: true
        case .tokenEndpoint: false
        }
    }
}

/// A Herald credential of another kind presented where an access token belongs. Telling these
/// apart from a merely bad token lets an app fix its bug (it sent the wrong stored value)
/// instead of signing the person out.
public enum MisusedTokenKind: String, Sendable, Equatable {
    /// An ID token this realm signed (`typ` JWT, not `at+jwt`).
    case idToken
    /// A refresh token of this realm (any state).
    case refreshToken
}

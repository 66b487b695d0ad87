import Foundation

/// The bounds every provider's identity tokens are held to, with Apple's values (HeraldApple's
/// own constants are the same numbers): a token a provider never issues is malformed before
/// any check reads it, and every later arithmetic on a claim time stays in range.
public enum IdentityTokenBounds {
    /// Tokens longer than this (in bytes) are refused before parsing.
    public static let maximumTokenBytes = 16_384
    /// Clock-skew allowance for `exp`, `iat` and `nbf`.
    public static let clockLeewaySeconds: TimeInterval = 60
    /// The longest `sub` accepted, in UTF-8 bytes.
    public static let maximumSubjectBytes = 255
    /// The longest `exp - iat` accepted: providers issue an hour or so.
    public static let maximumLifetimeSeconds: Double = 86_400
    /// The oldest `iat` accepted, before leeway: an app sends its token at once, so an older
    /// one is stored or stolen whatever its `exp` says (refused as `expired`).
    public static let maximumAgeSeconds: Double = 3_600
    /// The latest time a claim may name: 9999-12-31T23:59:59Z.
    public static let latestNumericDate: Double = 253_402_300_799
}

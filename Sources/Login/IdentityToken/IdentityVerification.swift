import Realms

/// What verifying one identity token established.
public enum IdentityVerification: Sendable {
    /// Who signed in (`name` from the token when the provider has one, else empty: a name the
    /// request brings wins), the audience of the token
    /// that matched the realm's configuration (the app the provider issued it to), and the claim
    /// that makes the token single-use, when the token has one. The login hands the audience
    /// on in its result, so no door reads the token again.
    case verified(ProviderIdentityClaims, audience: String, replay: (any ReplayClaim)?)
    /// The token was refused; `reason` names the first failed check (the answer's `details.reason`).
    case rejected(reason: String)
    /// Over the provider's size limit.
    case tooLarge
    /// The provider's keys could not be had and no cached key decided: retry later.
    case unavailable(retryAfterSeconds: Int)
}

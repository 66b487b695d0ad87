import Realms

/// What verifying one identity token established.
public enum IdentityVerification: Sendable {
    /// Who signed in (`name` empty: the name comes with the request), and the claim that makes
    /// the token single-use, when the token has one.
    case verified(ProviderIdentityClaims, replay: (any ReplayClaim)?)
    /// The token was refused; `reason` names the first failed check (the answer's `details.reason`).
    case rejected(reason: String)
    /// Over the provider's size limit.
    case tooLarge
    /// The provider's keys could not be had and no cached key decided: retry later.
    case unavailable(retryAfterSeconds: Int)
}

/// The outcome of verifying one Google ID token. The replay claim is not part of it: the
/// login records it in its own write transaction.
public enum GoogleVerificationResult: Sendable, Equatable {
    case verified(GoogleIdentityClaims)
    case rejected(GoogleRejectionReason)
    /// Over ``GoogleIdentityVerifier/maximumTokenBytes`` (answered 400, like Apple's).
    case tooLarge
    /// Google's keys could not be had and no cached key decided (503, never a refusal).
    case unavailable(retryAfterSeconds: Int)
}

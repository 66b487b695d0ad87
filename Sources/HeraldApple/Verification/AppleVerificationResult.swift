/// The outcome of verifying one Apple identity token.
///
/// How the native-login route maps it (CONTRACT.md):
/// - `verified` → continue with account resolution;
/// - `rejected(reason)` → 401 `invalid_apple_token`, `details.reason` = `reason.rawValue`;
/// - `tooLarge` → 400 `bad_request` (the token is over ``AppleIdentityVerifier/maximumTokenBytes``;
///   it counts as `malformed`, see ``rejectionReason``, but the contract answers 400 for it);
/// - `unavailable(retryAfterSeconds:)` → 503 `apple_unavailable` with `Retry-After`.
///
/// The replay claim is not part of it: the caller records it in its own transaction.
public enum AppleVerificationResult: Sendable, Equatable {
    case verified(AppleIdentityClaims)
    case rejected(AppleRejectionReason)
    case tooLarge
    case unavailable(retryAfterSeconds: Int)

    /// The contract reason when the token itself was refused (`tooLarge` counts as `malformed`).
    public var rejectionReason: AppleRejectionReason? {
        switch self {
        case .rejected(let reason): reason
        case .tooLarge: .malformed
        case .verified, .unavailable: nil
        }
    }
}

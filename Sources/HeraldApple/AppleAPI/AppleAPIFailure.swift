/// Why a call to Apple's token or revoke endpoint failed; raw values are metric labels and
/// log values (never Apple's body, which may quote what was sent).
public enum AppleAPIFailure: String, Error, Sendable, Equatable {
    /// The realm has no Team ID, Key ID or private key to sign a client secret with.
    case notConfigured = "not_configured"
    /// Apple answered a non-2xx status (e.g. `invalid_grant` for a used or expired code).
    case httpError = "http_error"
    case timeout
    case networkError = "network_error"
    case tooLarge = "too_large"
    /// A 2xx body that is not the JSON Apple documents.
    case invalid
    /// The database failed while loading the realm's key or storing the result.
    case storage
}

/// Why a call to Apple's token or revoke endpoint failed; raw values are metric labels and
/// log values (never Apple's body, which may quote what was sent).
public enum AppleAPIFailure: String, Error, Sendable, Equatable {
    /// The realm has no Team ID, Key ID or private key to sign a client secret with.
    case notConfigured = "not_configured"
    /// Apple refused the client secret (`invalid_client`): a wrong Team ID, Key ID, key or
    /// Services ID. Retrying cannot fix it; the operator must.
    case invalidClient = "invalid_client"
    /// Apple refused the code or token (`invalid_grant`): used, expired, or not for this client.
    case invalidGrant = "invalid_grant"
    /// Apple answered another 4xx: it refused the request itself.
    case refused
    /// Apple answered a 3xx or 5xx (an outage, or something between Herald and Apple).
    case httpError = "http_error"
    case timeout
    case networkError = "network_error"
    case tooLarge = "too_large"
    /// A 2xx body that is not the JSON Apple documents.
    case invalid
    /// The database failed while loading the realm's key or storing the result.
    case storage
    /// `AppleAPIClient.maximumExchangesInFlight` exchanges were already waiting on Apple.
    case busy

    /// Apple answered and said no: trying again later gives the same answer, so this is a
    /// failed sign-in, not Apple being unavailable.
    public var isRefusal: Bool {
        switch self {
        case .invalidClient, .invalidGrant, .refused: true
        default: false
        }
    }
}

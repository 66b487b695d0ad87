import JOSE

/// How one JWKS fetch ended; raw values are the `outcome` label of the fetch metric.
public enum JWKSFetchOutcome: String, Sendable, Hashable, CaseIterable {
    /// A JSON key set with at least one usable key.
    case success
    /// A non-2xx status.
    case httpError = "http_error"
    /// No response headers within the connect timeout, or no complete body within the total timeout.
    case timeout
    /// Not a JWKS document, or one without a single usable key.
    case invalid
    /// A body over the response cap (announced by Content-Length or counted while streaming).
    case tooLarge = "too_large"
    /// Connection refused, DNS or TLS failure and similar transport errors.
    case networkError = "network_error"
}

/// What a fetcher returns.
public enum JWKSFetchResult: Sendable {
    /// The parsed key set and the response's `Cache-Control: max-age`, if any.
    case success(JWKSet, cacheControl: String?)
    /// Why no key set was obtained (never `.success`).
    case failure(JWKSFetchOutcome)
}

/// Fetches a provider's key set; ``JWKSClient`` over HTTP, or a test double.
public protocol JWKSFetching: Sendable {
    /// One fetch; must not block a thread while waiting for the network.
    func fetchKeySet() async -> JWKSFetchResult
}

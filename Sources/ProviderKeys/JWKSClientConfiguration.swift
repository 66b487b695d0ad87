import Foundation

/// Where and how ``JWKSClient`` fetches a provider's key set. Each provider module gives its
/// own default URL (Apple's `AppleJWKSClientConfiguration.defaultURL`, `GoogleJWKS.defaultURL`).
public struct JWKSClientConfiguration: Sendable {
    /// The JWKS URL (`HERALD_APPLE_JWKS_URL`, `HERALD_GOOGLE_JWKS_URL`; tests serve their own on loopback).
    public var url: URL
    /// Seconds allowed to connect and receive the response headers.
    public var connectTimeout: TimeInterval = 2
    /// Seconds allowed for the whole exchange, body included.
    public var totalTimeout: TimeInterval = 5
    /// Largest accepted body; a longer one is abandoned as soon as the cap is crossed.
    public var maximumResponseBytes = 65_536

    /// A configuration for `url` with the default timeouts and cap.
    public init(url: URL) {
        self.url = url
    }
}

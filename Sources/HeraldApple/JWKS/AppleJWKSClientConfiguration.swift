import Foundation

/// Where and how ``AppleJWKSClient`` fetches Apple's key set.
public struct AppleJWKSClientConfiguration: Sendable {
    /// Apple's published key set.
    public static let defaultURL = URL(string: "https://appleid.apple.com/auth/keys")!

    /// The JWKS URL (`HERALD_APPLE_JWKS_URL`; tests serve their own on loopback).
    public var url: URL
    /// Seconds allowed to connect and receive the response headers.
    public var connectTimeout: TimeInterval = 2
    /// Seconds allowed for the whole exchange, body included.
    public var totalTimeout: TimeInterval = 5
    /// Largest accepted body; a longer one is abandoned as soon as the cap is crossed.
    public var maximumResponseBytes = 65_536

    /// A configuration for `url` with the default timeouts and cap.
    public init(url: URL = AppleJWKSClientConfiguration.defaultURL) {
        self.url = url
    }
}

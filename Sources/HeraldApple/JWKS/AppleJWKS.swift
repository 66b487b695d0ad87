import Foundation
import ProviderKeys

// Apple's JWKS fetching and caching is ProviderKeys' (shared with Google); these names keep
// HeraldApple's public API, its tests and the `herald_apple_jwks_*` metrics as they were.

/// Apple's signing keys, cached (``JWKSCache``).
public typealias AppleJWKSCache = JWKSCache
/// The timing rules of ``AppleJWKSCache`` (``JWKSCachePolicy``).
public typealias AppleJWKSCachePolicy = JWKSCachePolicy
/// Fetches Apple's JWKS over HTTP(S) (``JWKSClient``).
public typealias AppleJWKSClient = JWKSClient
/// Where and how Apple's key set is fetched (``JWKSClientConfiguration``).
public typealias AppleJWKSClientConfiguration = JWKSClientConfiguration
/// How one fetch of Apple's JWKS ended (``JWKSFetchOutcome``).
public typealias AppleJWKSFetchOutcome = JWKSFetchOutcome
/// What a fetcher of Apple's JWKS returns (``JWKSFetchResult``).
public typealias AppleJWKSFetchResult = JWKSFetchResult
/// Fetches Apple's key set (``JWKSFetching``).
public typealias AppleJWKSFetching = JWKSFetching
/// The Apple JWKS cache's counters (``JWKSMetrics``).
public typealias AppleJWKSMetrics = JWKSMetrics
/// Where the verifier finds Apple's public keys by `kid` (``SigningKeySource``).
public typealias AppleSigningKeySource = SigningKeySource
/// The answer to a key lookup (``SigningKeyLookup``).
public typealias AppleSigningKeyLookup = SigningKeyLookup
/// A fixed key set for offline diagnosis and tests (``StaticKeySet``).
public typealias AppleStaticKeySet = StaticKeySet
/// `Cache-Control` freshness parsing, shared with every provider's key cache.
typealias CacheControlMaxAge = ProviderKeys.CacheControlMaxAge

extension JWKSClientConfiguration {
    /// Apple's published key set.
    public static let defaultURL = URL(string: "https://appleid.apple.com/auth/keys")!

    /// Apple's key set with the default timeouts and cap.
    public init() {
        self.init(url: Self.defaultURL)
    }
}

import JOSE

/// Where a verifier finds its provider's public keys by `kid`: the live JWKS cache, or a fixed set
/// (offline diagnosis, tests).
public protocol SigningKeySource: Sendable {
    /// Resolves a key id; may fetch, must never block a thread while waiting.
    func signingKey(for keyID: String) async -> SigningKeyLookup
}

/// The answer to a key lookup.
public enum SigningKeyLookup: Sendable {
    /// The key for the kid.
    case found(PublicKey)
    /// The provider's current key set (fresh, or just refreshed) has no such kid.
    case unknown
    /// No key can decide: the JWKS could not be fetched and nothing usable is cached for the kid.
    case unavailable(retryAfterSeconds: Int)
}

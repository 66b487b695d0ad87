import JOSE

/// Where the verifier finds Apple's public keys by `kid`: the live JWKS cache, or a fixed set
/// (offline diagnosis, tests).
public protocol AppleSigningKeySource: Sendable {
    /// Resolves a key id; may fetch, must never block a thread while waiting.
    func signingKey(for keyID: String) async -> AppleSigningKeyLookup
}

/// The answer to a key lookup.
public enum AppleSigningKeyLookup: Sendable {
    /// The key for the kid.
    case found(PublicKey)
    /// Apple's current key set (fresh, or just refreshed) has no such kid.
    case unknown
    /// No key can decide: the JWKS could not be fetched and nothing usable is cached for the kid.
    case unavailable(retryAfterSeconds: Int)
}

import JOSE

/// Where a verifier finds its provider's public keys by `kid`: the live JWKS cache, or a fixed set
/// (offline diagnosis, tests).
public protocol SigningKeySource: Sendable {
    /// Resolves a key id; may fetch, must never block a thread while waiting.
    func signingKey(for keyID: String) async -> SigningKeyLookup
    /// The key for `keyID` when the source holds it fresh and can answer without waiting; nil
    /// when only `signingKey(for:)` can decide.
    func freshSigningKey(for keyID: String) -> PublicKey?
}

extension SigningKeySource {
    /// A source that always answers through `signingKey(for:)`.
    public func freshSigningKey(for keyID: String) -> PublicKey? { nil }

    /// `signingKey(for:)`, answered without a suspension when the key is fresh. A cache behind
    /// an actor would otherwise move every verification onto another thread (a thread hop per
    /// login) just to read a dictionary.
    public func resolve(_ keyID: String) async -> SigningKeyLookup {
        if let key = freshSigningKey(for: keyID) { return .found(key) }
        return await signingKey(for: keyID)
    }
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

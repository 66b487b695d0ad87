import JOSE

/// A realm's published public keys (its `jwks.json`), and the kids of published keys whose
/// stored JWK could not be read. Those are left out rather than failing the whole document, so
/// one damaged row does not stop every relying party verifying the realm's tokens; TokenIssuer
/// has no log, so it hands them to the caller, which logs them (a kid is public, not a secret).
public struct PublishedSigningKeys: Sendable {
    /// The keys to publish: the active key first, then unexpired retired keys, newest first.
    public let keys: [JWK]
    /// Kids of published rows whose `public_jwk` is unreadable; empty unless the row was damaged.
    public let unreadableKids: [String]

    public init(keys: [JWK], unreadableKids: [String]) {
        self.keys = keys
        self.unreadableKids = unreadableKids
    }
}

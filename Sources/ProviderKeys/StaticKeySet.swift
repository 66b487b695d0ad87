import JOSE

/// A fixed key set, for offline diagnosis (`--jwks FILE`) and tests; never fetches.
public struct StaticKeySet: SigningKeySource {
    /// The keys by kid.
    public let keySet: JWKSet

    /// Wraps a parsed key set.
    public init(keySet: JWKSet) {
        self.keySet = keySet
    }

    /// Parses a JWKS document (`{"keys":[…]}`); malformed entries are skipped, as in the live cache.
    public init(document: [UInt8]) throws(JOSEError) {
        self.keySet = try JWKSet.parse(document)
    }

    /// Looks the kid up; a fixed set is always authoritative, so a miss is `unknown`.
    public func signingKey(for keyID: String) async -> SigningKeyLookup {
        if let key = keySet.keys[keyID] { return .found(key) }
        return .unknown
    }
}

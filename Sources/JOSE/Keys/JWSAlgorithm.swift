/// The JWS algorithms Herald signs and verifies. `none` and HS* are deliberately absent, so a
/// header's `alg` mapped with `JWSAlgorithm(rawValue:)` can never select them.
public enum JWSAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 §3.3).
    case rs256 = "RS256"
    /// ECDSA P-256 with SHA-256, signature as raw r‖s (RFC 7518 §3.4).
    case es256 = "ES256"
    /// Ed25519 (RFC 8037 §3.1).
    case edDSA = "EdDSA"

    /// The digest OpenSSL is asked for: SHA-256, or none for EdDSA (Ed25519 hashes internally).
    var digestName: String? {
        switch self {
        case .rs256, .es256: "SHA256"
        case .edDSA: nil
        }
    }

    /// True when this algorithm can be used with a key of `keyType`.
    public func fits(_ keyType: KeyType) -> Bool {
        switch (self, keyType) {
        case (.rs256, .rsa), (.es256, .ecP256), (.edDSA, .ed25519): true
        default: false
        }
    }
}

import JOSE
import Realms

/// A freshly generated signing key, sealed and ready to insert. Generation (RSA takes tens
/// of milliseconds) happens before the write transaction so the writer is not held meanwhile.
public struct PreparedSigningKey: Sendable {
    public let realmID: String
    public let kid: String
    public let algorithm: SigningAlgorithm
    /// PKCS#8 DER sealed under the master key with `SigningKeyRing.sealContext`.
    let sealedPrivateKey: [UInt8]
    public let publicJWK: JWK
}

/// A signing key as listed: never the private half.
public struct SigningKeyInfo: Sendable, Equatable, Codable {
    public let kid: String
    public let algorithm: String
    /// `active` (signs new tokens) or `retired` (published until `publishUntil`).
    public let status: String
    public let createdAt: Int64
    public let retiredAt: Int64?
    public let publishUntil: Int64?
}

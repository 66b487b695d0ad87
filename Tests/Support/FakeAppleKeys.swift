import JOSE

/// Apple's signing keys as a test sees them: one RSA and one EC key (Apple has used both),
/// plus spares for rotation.
public final class FakeAppleKeys: Sendable {
    /// An RSA-2048 key, kid ``rsaKeyID``.
    public let rsa: PrivateKey
    /// A P-256 key, kid ``ecKeyID``.
    public let ec: PrivateKey
    /// An RSA key Apple "rotates to" later, kid ``rotatedKeyID``.
    public let rotated: PrivateKey
    public let rsaKeyID = "fake-rsa-1"
    public let ecKeyID = "fake-ec-1"
    public let rotatedKeyID = "fake-rsa-2"

    /// Generates fresh keys.
    public init() throws {
        rsa = try PrivateKey.generate(for: .rs256)
        ec = try PrivateKey.generate(for: .es256)
        rotated = try PrivateKey.generate(for: .rs256)
    }

    /// The JWKS Apple publishes before rotation: the RSA and EC keys.
    public var document: [UInt8] {
        JWKSet.document([rsa.publicKey.jwk(keyID: rsaKeyID), ec.publicKey.jwk(keyID: ecKeyID)])
    }

    /// The JWKS after rotation: the new RSA key added.
    public var rotatedDocument: [UInt8] {
        JWKSet.document([rsa.publicKey.jwk(keyID: rsaKeyID), ec.publicKey.jwk(keyID: ecKeyID),
                         rotated.publicKey.jwk(keyID: rotatedKeyID)])
    }

    /// The pre-rotation set, parsed.
    public var keySet: JWKSet {
        get throws { try JWKSet.parse(document) }
    }
}

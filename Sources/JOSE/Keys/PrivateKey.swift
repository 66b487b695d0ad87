import COpenSSL

/// A private signing key (RSA ≥ 2048, EC P-256 or Ed25519) owning one OpenSSL EVP_PKEY, parsed
/// once. Sign with `sign(message:algorithm:)`; `publicKey` is derived once at init.
///
/// `@unchecked Sendable` because OpaquePointer is not Sendable, but sharing is safe: the EVP_PKEY
/// is never mutated after init, and OpenSSL supports concurrent signing with one key when each
/// operation has its own EVP_MD_CTX, which `sign` copies per call from `signing`.
public final class PrivateKey: @unchecked Sendable {
    let pkey: OpaquePointer
    /// The key's type (and RSA size).
    public let keyType: KeyType
    /// The matching public key (a separate EVP_PKEY holding no private material).
    public let publicKey: PublicKey
    /// Signing with the key type's one algorithm, initialised once; nil if OpenSSL refused.
    private let signing: DigestContextTemplate?

    /// Takes ownership of `pkey` (freed here on failure, else in deinit).
    init(taking pkey: OpaquePointer) throws(JOSEError) {
        let keyType: KeyType
        let publicKey: PublicKey
        do throws(JOSEError) {
            keyType = try KeyType.of(pkey)
            guard let der = PublicKey.spkiDER(of: pkey) else { throw JOSEError(.invalidKey, "public part could not be derived") }
            publicKey = try PublicKey(spkiDER: der)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.pkey = pkey
        self.keyType = keyType
        self.publicKey = publicKey
        signing = DigestContextTemplate(.sign, pkey: pkey, digestName: keyType.algorithm.digestName)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A new random key for `algorithm`: RSA 2048 (RS256), P-256 (ES256) or Ed25519 (EdDSA).
    public static func generate(for algorithm: JWSAlgorithm) throws(JOSEError) -> PrivateKey {
        let name = switch algorithm {
        case .rs256: "RSA"
        case .es256: "EC"
        case .edDSA: "ED25519"
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, name, nil) else {
            throw JOSEError(.keyGenerationFailed, "key context allocation failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else {
            ERR_clear_error()
            throw JOSEError(.keyGenerationFailed, "key generation could not start")
        }
        let configured: Bool = switch algorithm {
        case .rs256: EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(KeyType.minimumRSABits)) == 1
        case .es256: EVP_PKEY_CTX_set_group_name(context, herald_CURVE_P256()) == 1
        case .edDSA: true
        }
        var pkey: OpaquePointer?
        guard configured, EVP_PKEY_generate(context, &pkey) == 1, let pkey else {
            ERR_clear_error()
            throw JOSEError(.keyGenerationFailed, "key generation failed")
        }
        return try PrivateKey(taking: pkey)
    }

    /// A key from a "PRIVATE KEY" (unencrypted PKCS#8) PEM block; an Apple .p8 file is one.
    public convenience init(pkcs8PEM pem: String) throws(JOSEError) {
        try self.init(pkcs8DER: PEM.decode(pem, label: "PRIVATE KEY"))
    }

    /// A key from DER PKCS#8 PrivateKeyInfo.
    public convenience init(pkcs8DER der: [UInt8]) throws(JOSEError) {
        let pkey = try der.withUnsafeBufferPointer { (buffer) throws(JOSEError) -> OpaquePointer in
            var cursor = buffer.baseAddress
            guard let info = d2i_PKCS8_PRIV_KEY_INFO(nil, &cursor, buffer.count) else {
                ERR_clear_error()
                throw JOSEError(.malformed, "not a DER PKCS#8 private key")
            }
            defer { PKCS8_PRIV_KEY_INFO_free(info) }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                throw JOSEError(.malformed, "trailing data after PKCS#8 private key")
            }
            guard let pkey = EVP_PKCS82PKEY_ex(info, nil, nil) else {
                ERR_clear_error()
                throw JOSEError(.invalidKey, "PKCS#8 private key could not be loaded")
            }
            return pkey
        }
        try self.init(taking: pkey)
    }

    /// The key as DER PKCS#8 PrivateKeyInfo. Secret: encrypt it (MasterKey) before storing.
    public func pkcs8DER() throws(JOSEError) -> [UInt8] {
        guard let info = EVP_PKEY2PKCS8(pkey) else {
            ERR_clear_error()
            throw JOSEError(.exportFailed, "private key could not be converted to PKCS#8")
        }
        defer { PKCS8_PRIV_KEY_INFO_free(info) }
        let length = i2d_PKCS8_PRIV_KEY_INFO(info, nil)
        guard length > 0 else { throw JOSEError(.exportFailed, "PKCS#8 encoding failed") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PKCS8_PRIV_KEY_INFO(info, &cursor)
        }
        guard written == length else { throw JOSEError(.exportFailed, "PKCS#8 encoding failed") }
        return der
    }

    /// The key as a "PRIVATE KEY" PEM block. Secret.
    public func pkcs8PEM() throws(JOSEError) -> String {
        PEM.encode(try pkcs8DER(), label: "PRIVATE KEY")
    }

    /// Signs `message` (the JWS signing input) with `algorithm`, which must fit the key type.
    /// RS256 gives a modulus-sized signature, ES256 raw r‖s (64 bytes), EdDSA 64 bytes.
    public func sign(message: [UInt8], algorithm: JWSAlgorithm) throws(JOSEError) -> [UInt8] {
        guard algorithm.fits(keyType) else {
            throw JOSEError(.keyAlgorithmMismatch, "\(algorithm.rawValue) cannot sign with a \(keyType) key")
        }
        switch algorithm {
        case .rs256, .edDSA:
            return try digestSign(message: message)
        case .es256:
            guard let raw = ECDSASignature.raw(fromDER: try digestSign(message: message)) else {
                throw JOSEError(.signingFailed, "ECDSA signature could not be converted to r‖s")
            }
            return raw
        }
    }

    private func digestSign(message: [UInt8]) throws(JOSEError) -> [UInt8] {
        // The key's maximum signature size: the modulus for RSA, the longest DER for ECDSA, 64 for Ed25519.
        var length = Int(EVP_PKEY_get_size(pkey))
        guard length > 0 else { throw JOSEError(.signingFailed, "unknown signature size") }
        var signature = [UInt8](repeating: 0, count: length)
        let result = signing?.withContext { context in
            signature.withUnsafeMutableBufferPointer { output in
                withNonNullBytes(message) { messagePointer, messageCount in
                    EVP_DigestSign(context, output.baseAddress, &length, messagePointer, messageCount)
                }
            }
        }
        guard let result else { throw JOSEError(.signingFailed, "signing could not start") }
        guard result == 1, length <= signature.count else {
            ERR_clear_error()
            throw JOSEError(.signingFailed, "signing failed")
        }
        signature.removeSubrange(length...)
        return signature
    }
}

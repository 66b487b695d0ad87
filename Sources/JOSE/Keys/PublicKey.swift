import COpenSSL

/// A public key that verifies JWS signatures (RSA ≥ 2048, EC P-256 or Ed25519). It owns one
/// OpenSSL EVP_PKEY, parsed once; keep the instance and reuse it across requests.
///
/// `@unchecked Sendable` because OpaquePointer is not Sendable, but sharing is safe: the EVP_PKEY
/// is never mutated after init, OpenSSL reference-counts it atomically and supports concurrent
/// use of one key from several threads as long as each operation has its own EVP_MD_CTX /
/// EVP_PKEY_CTX, which every method here creates (or copies from `verifying`) per call.
public final class PublicKey: @unchecked Sendable {
    let pkey: OpaquePointer
    /// The key's type (and RSA size), fixed when the key is parsed.
    public let keyType: KeyType
    /// Verification with the key type's one algorithm, initialised once; nil if OpenSSL refused.
    private let verifying: DigestContextTemplate?

    /// Takes ownership of `pkey` (freed here on failure, else in deinit).
    init(taking pkey: OpaquePointer) throws(JOSEError) {
        let keyType: KeyType
        do throws(JOSEError) {
            keyType = try KeyType.of(pkey)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        self.pkey = pkey
        self.keyType = keyType
        verifying = DigestContextTemplate(.verify, pkey: pkey, digestName: keyType.algorithm.digestName)
    }

    deinit { EVP_PKEY_free(pkey) }

    /// A public key from a DER SubjectPublicKeyInfo (the body of a "PUBLIC KEY" PEM block).
    public convenience init(spkiDER der: [UInt8]) throws(JOSEError) {
        let pkey = try der.withUnsafeBufferPointer { (buffer) throws(JOSEError) -> OpaquePointer in
            var cursor = buffer.baseAddress
            guard let pkey = d2i_PUBKEY_ex(nil, &cursor, buffer.count, nil, nil) else {
                ERR_clear_error()
                throw JOSEError(.malformed, "not a DER SubjectPublicKeyInfo")
            }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                EVP_PKEY_free(pkey)
                throw JOSEError(.malformed, "trailing data after SubjectPublicKeyInfo")
            }
            return pkey
        }
        try self.init(taking: pkey)
    }

    /// A public key from a "PUBLIC KEY" PEM block.
    public convenience init(spkiPEM pem: String) throws(JOSEError) {
        try self.init(spkiDER: PEM.decode(pem, label: "PUBLIC KEY"))
    }

    /// The key as DER SubjectPublicKeyInfo.
    public func spkiDER() -> [UInt8] {
        // i2d_PUBKEY only fails on allocation failure for the key types this class admits.
        guard let der = Self.spkiDER(of: pkey) else { fatalError("SubjectPublicKeyInfo encoding failed inside OpenSSL") }
        return der
    }

    /// The key as a "PUBLIC KEY" PEM block.
    public func spkiPEM() -> String { PEM.encode(spkiDER(), label: "PUBLIC KEY") }

    /// Verifies a JWS signature over `message`. False when the signature is wrong, malformed, or
    /// `algorithm` does not fit this key's type (RS256 needs RSA, ES256 P-256, EdDSA Ed25519).
    public func verify(signature: [UInt8], message: [UInt8], algorithm: JWSAlgorithm) -> Bool {
        guard algorithm.fits(keyType) else { return false }
        switch algorithm {
        case .rs256:
            return digestVerify(signature: signature, message: message)
        case .es256:
            // JOSE's r‖s is exactly 64 bytes; any other length (DER included) is not an ES256 signature.
            guard let der = ECDSASignature.der(fromRaw: signature) else { return false }
            return digestVerify(signature: der, message: message)
        case .edDSA:
            guard signature.count == 64 else { return false }
            // Ed25519 hashes internally: one-shot EVP_DigestVerify with no digest.
            return digestVerify(signature: signature, message: message)
        }
    }

    /// The public JWK with "use":"sig" and the key type's "alg".
    public func jwk(keyID: String?) -> JWK {
        var jwk: JWK
        switch keyType {
        case .rsa:
            jwk = JWK(kty: "RSA", n: Base64URL.encode(bigNumberParameter(OSSL_PKEY_PARAM_RSA_N, padTo: nil)),
                      e: Base64URL.encode(bigNumberParameter(OSSL_PKEY_PARAM_RSA_E, padTo: nil)))
        case .ecP256:
            jwk = JWK(kty: "EC", crv: "P-256",
                      x: Base64URL.encode(bigNumberParameter(OSSL_PKEY_PARAM_EC_PUB_X, padTo: 32)),
                      y: Base64URL.encode(bigNumberParameter(OSSL_PKEY_PARAM_EC_PUB_Y, padTo: 32)))
        case .ed25519:
            jwk = JWK(kty: "OKP", crv: "Ed25519", x: Base64URL.encode(rawPublicKey()))
        }
        jwk.kid = keyID
        jwk.use = "sig"
        jwk.alg = keyType.algorithm.rawValue
        return jwk
    }

    /// The RFC 7638 JWK thumbprint (base64url SHA-256 of the canonical required members); a stable key id.
    public func thumbprint() -> String {
        let jwk = jwk(keyID: nil)
        var members: [String: JSONValue] = ["kty": .string(jwk.kty)]
        for (name, value) in [("n", jwk.n), ("e", jwk.e), ("crv", jwk.crv), ("x", jwk.x), ("y", jwk.y)] {
            if let value { members[name] = .string(value) }
        }
        // JSONValue serializes compactly with sorted keys: exactly RFC 7638's canonical form.
        return Base64URL.encode(SHA256.hash(JSONValue.object(members).serialized()))
    }

    // MARK: - OpenSSL plumbing

    private func digestVerify(signature: [UInt8], message: [UInt8]) -> Bool {
        let result = verifying?.withContext { context in
            withNonNullBytes(signature) { signaturePointer, signatureCount in
                withNonNullBytes(message) { messagePointer, messageCount in
                    EVP_DigestVerify(context, signaturePointer, signatureCount, messagePointer, messageCount)
                }
            }
        }
        if result != 1 { ERR_clear_error() }  // a bad signature leaves entries on this thread's error queue
        return result == 1
    }

    private func bigNumberParameter(_ name: String, padTo width: Int?) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, name, &number) == 1, let number else {
            fatalError("OpenSSL key lacks a public parameter its type requires")
        }
        defer { BN_free(number) }
        let count = width ?? Int((BN_num_bits(number) + 7) / 8)
        var bytes = [UInt8](repeating: 0, count: count)
        let written = bytes.withUnsafeMutableBufferPointer { BN_bn2binpad(number, $0.baseAddress, Int32(count)) }
        guard written == Int32(count) else { fatalError("OpenSSL big number does not fit its declared width") }
        return bytes
    }

    private func rawPublicKey() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(pkey, &bytes, &length) == 1, length == 32 else {
            fatalError("OpenSSL Ed25519 key without a raw public key")
        }
        return bytes
    }

    static func spkiDER(of pkey: OpaquePointer) -> [UInt8]? {
        let length = i2d_PUBKEY(pkey, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pkey, &cursor)
        }
        return written == length ? der : nil
    }
}

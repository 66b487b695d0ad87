import COpenSSL

/// Building public keys from their JWK components (RFC 7518 §6, RFC 8037 §2).
extension PublicKey {
    /// An RSA public key from big-endian modulus and exponent. Leading zero bytes are tolerated
    /// (some libraries emit them); the modulus must have 2048–8192 bits.
    static func rsa(modulus: [UInt8], exponent: [UInt8]) throws(JOSEError) -> PublicKey {
        let n = Array(modulus.drop(while: { $0 == 0 }))
        let e = Array(exponent.drop(while: { $0 == 0 }))
        guard let leading = n.first, let lastByteOfN = n.last else { throw JOSEError(.invalidKey, "RSA modulus is empty") }
        let bits = n.count * 8 - leading.leadingZeroBitCount
        // Checked before OpenSSL sees the key: a tiny key is rejected without any work.
        guard bits >= KeyType.minimumRSABits else { throw JOSEError(.keyTooSmall, "RSA keys must have at least 2048 bits") }
        guard bits <= KeyType.maximumRSABits else { throw JOSEError(.unsupportedKeyType, "RSA keys above 8192 bits are not supported") }
        guard lastByteOfN & 1 == 1 else { throw JOSEError(.invalidKey, "RSA modulus must be odd") }
        // e must be odd and > 1; more than 64 bits is never used and OpenSSL rejects large e anyway.
        guard let lastByteOfE = e.last, e.count <= 8, lastByteOfE & 1 == 1, e != [1] else {
            throw JOSEError(.invalidKey, "RSA exponent is invalid")
        }

        guard let bigN = n.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw JOSEError(.invalidKey, "RSA modulus could not be loaded")
        }
        defer { BN_free(bigN) }
        guard let bigE = e.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else {
            throw JOSEError(.invalidKey, "RSA exponent could not be loaded")
        }
        defer { BN_free(bigE) }
        guard let builder = OSSL_PARAM_BLD_new() else { throw JOSEError(.invalidKey, "parameter builder allocation failed") }
        defer { OSSL_PARAM_BLD_free(builder) }
        guard OSSL_PARAM_BLD_push_BN(builder, herald_PARAM_RSA_N(), bigN) == 1,
              OSSL_PARAM_BLD_push_BN(builder, herald_PARAM_RSA_E(), bigE) == 1,
              let parameters = OSSL_PARAM_BLD_to_param(builder) else {
            ERR_clear_error()
            throw JOSEError(.invalidKey, "RSA parameters could not be built")
        }
        defer { OSSL_PARAM_free(parameters) }
        let pkey = try fromData(algorithmName: "RSA", parameters: parameters)
        return try PublicKey(taking: pkey)
    }

    /// A P-256 public key from its 32-byte affine coordinates; points not on the curve are rejected.
    static func ecP256(x: [UInt8], y: [UInt8]) throws(JOSEError) -> PublicKey {
        guard x.count == 32, y.count == 32 else { throw JOSEError(.invalidKey, "P-256 coordinates must be 32 bytes each") }
        let point: [UInt8] = [0x04] + x + y  // SEC 1 uncompressed encoding
        let pkey = try point.withUnsafeBufferPointer { (encoded) throws(JOSEError) -> OpaquePointer in
            guard let builder = OSSL_PARAM_BLD_new() else { throw JOSEError(.invalidKey, "parameter builder allocation failed") }
            defer { OSSL_PARAM_BLD_free(builder) }
            // The builder keeps these pointers until to_param, which runs inside this closure.
            guard OSSL_PARAM_BLD_push_utf8_string(builder, herald_PARAM_GROUP_NAME(), herald_CURVE_P256(), 0) == 1,
                  OSSL_PARAM_BLD_push_octet_string(builder, herald_PARAM_PUB_KEY(), encoded.baseAddress, encoded.count) == 1,
                  let parameters = OSSL_PARAM_BLD_to_param(builder) else {
                ERR_clear_error()
                throw JOSEError(.invalidKey, "EC parameters could not be built")
            }
            defer { OSSL_PARAM_free(parameters) }
            return try fromData(algorithmName: "EC", parameters: parameters)
        }
        let key = try PublicKey(taking: pkey)
        // Import already decodes the point; the explicit check also rejects the point at infinity
        // and points outside the prime-order group, whatever the OpenSSL version does on import.
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pkey, nil) else {
            throw JOSEError(.invalidKey, "key context allocation failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_public_check(context) == 1 else {
            ERR_clear_error()
            throw JOSEError(.invalidKey, "EC point is not a valid P-256 public key")
        }
        return key
    }

    /// An Ed25519 public key from its 32-byte encoding.
    static func ed25519(x: [UInt8]) throws(JOSEError) -> PublicKey {
        guard x.count == 32 else { throw JOSEError(.invalidKey, "Ed25519 public keys are 32 bytes") }
        guard let pkey = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, x, x.count) else {
            ERR_clear_error()
            throw JOSEError(.invalidKey, "Ed25519 public key could not be loaded")
        }
        return try PublicKey(taking: pkey)
    }

    private static func fromData(algorithmName: String, parameters: UnsafeMutablePointer<OSSL_PARAM>) throws(JOSEError) -> OpaquePointer {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithmName, nil) else {
            throw JOSEError(.invalidKey, "key context allocation failed")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &pkey, herald_EVP_PKEY_PUBLIC_KEY(), parameters) == 1,
              let pkey else {
            ERR_clear_error()
            throw JOSEError(.invalidKey, "public key parameters were rejected")
        }
        return pkey
    }
}

import COpenSSL

/// AES-256-GCM authenticated encryption. A sealed box is 12-byte nonce ‖ ciphertext ‖ 16-byte tag;
/// every seal draws a fresh random nonce, so one key may seal many messages.
public enum AESGCM {
    /// Key length in bytes.
    public static let keyByteCount = 32
    /// Nonce length in bytes (the GCM default; other lengths are hashed and slower).
    public static let nonceByteCount = 12
    /// Authentication tag length in bytes.
    public static let tagByteCount = 16

    /// Encrypts and authenticates `plaintext`, and authenticates `associatedData` without encrypting it.
    public static func seal(key: [UInt8], plaintext: [UInt8], associatedData: [UInt8] = []) throws(JOSEError) -> [UInt8] {
        try seal(key: key, nonce: SecureRandom.bytes(count: nonceByteCount), plaintext: plaintext, associatedData: associatedData)
    }

    /// Seals with a caller-chosen nonce. Internal: reusing a nonce under one key breaks GCM, so
    /// only known-answer tests choose it.
    static func seal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], associatedData: [UInt8]) throws(JOSEError) -> [UInt8] {
        guard key.count == keyByteCount else { throw JOSEError(.invalidKey, "AES-256-GCM key must be 32 bytes") }
        precondition(nonce.count == nonceByteCount, "AES-GCM nonce must be 12 bytes")
        // OpenSSL's update functions take Int32 lengths.
        guard plaintext.count < Int(Int32.max) - 64, associatedData.count < Int(Int32.max) else {
            throw JOSEError(.encryptionFailed, "input too large for AES-256-GCM")
        }
        guard let context = EVP_CIPHER_CTX_new() else { throw JOSEError(.encryptionFailed, "cipher context allocation failed") }
        defer { EVP_CIPHER_CTX_free(context) }

        guard EVP_EncryptInit_ex2(context, FetchedAlgorithms.aes256GCM, key, nonce, nil) == 1 else {
            ERR_clear_error()
            throw JOSEError(.encryptionFailed, "AES-256-GCM initialization failed")
        }
        var sealed = [UInt8](repeating: 0, count: nonceByteCount + plaintext.count + tagByteCount)
        let succeeded = sealed.withUnsafeMutableBufferPointer { output -> Bool in
            let base = output.baseAddress!
            base.update(from: nonce, count: nonceByteCount)
            var length: Int32 = 0
            if !associatedData.isEmpty {
                guard EVP_EncryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else { return false }
            }
            var written = 0
            if !plaintext.isEmpty {
                guard EVP_EncryptUpdate(context, base + nonceByteCount, &length, plaintext, Int32(plaintext.count)) == 1 else { return false }
                written = Int(length)
            }
            guard EVP_EncryptFinal_ex(context, base + nonceByteCount + written, &length) == 1 else { return false }
            written += Int(length)
            guard written == plaintext.count else { return false }
            var parameters = [
                OSSL_PARAM_construct_octet_string(herald_PARAM_AEAD_TAG(), base + nonceByteCount + written, tagByteCount),
                herald_OSSL_PARAM_END(),
            ]
            return EVP_CIPHER_CTX_get_params(context, &parameters) == 1
        }
        guard succeeded else {
            ERR_clear_error()
            throw JOSEError(.encryptionFailed, "AES-256-GCM encryption failed")
        }
        return sealed
    }

    /// Authenticates and decrypts a sealed box. Fails with `.decryptionFailed` if the key is wrong or
    /// any byte of the box or of `associatedData` was changed.
    public static func open(key: [UInt8], sealed: [UInt8], associatedData: [UInt8] = []) throws(JOSEError) -> [UInt8] {
        guard key.count == keyByteCount else { throw JOSEError(.invalidKey, "AES-256-GCM key must be 32 bytes") }
        guard sealed.count >= nonceByteCount + tagByteCount, sealed.count < Int(Int32.max), associatedData.count < Int(Int32.max) else {
            throw JOSEError(.decryptionFailed, "sealed box has an invalid length")
        }
        let ciphertextCount = sealed.count - nonceByteCount - tagByteCount
        guard let context = EVP_CIPHER_CTX_new() else { throw JOSEError(.decryptionFailed, "cipher context allocation failed") }
        defer { EVP_CIPHER_CTX_free(context) }

        // One spare byte so the output pointer is valid even for an empty plaintext (GCM's final
        // step writes nothing); it is removed before returning.
        var plaintext = [UInt8](repeating: 0, count: ciphertextCount + 1)
        let succeeded = sealed.withUnsafeBufferPointer { input -> Bool in
            let base = input.baseAddress!
            guard EVP_DecryptInit_ex2(context, FetchedAlgorithms.aes256GCM, key, base, nil) == 1 else { return false }
            var length: Int32 = 0
            if !associatedData.isEmpty {
                guard EVP_DecryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1 else { return false }
            }
            return plaintext.withUnsafeMutableBufferPointer { output -> Bool in
                var written = 0
                if ciphertextCount > 0 {
                    guard EVP_DecryptUpdate(context, output.baseAddress, &length, base + nonceByteCount, Int32(ciphertextCount)) == 1 else {
                        return false
                    }
                    written = Int(length)
                }
                // The tag is only read by OpenSSL; the parameter type is non-const for both directions.
                var parameters = [
                    OSSL_PARAM_construct_octet_string(
                        herald_PARAM_AEAD_TAG(), UnsafeMutableRawPointer(mutating: base + nonceByteCount + ciphertextCount), tagByteCount),
                    herald_OSSL_PARAM_END(),
                ]
                guard EVP_CIPHER_CTX_set_params(context, &parameters) == 1 else { return false }
                // Final is where GCM compares tags; any change to nonce, ciphertext, tag or AAD fails here.
                guard EVP_DecryptFinal_ex(context, output.baseAddress! + written, &length) == 1 else { return false }
                return written + Int(length) == ciphertextCount
            }
        }
        guard succeeded else {
            ERR_clear_error()
            throw JOSEError(.decryptionFailed, "AES-256-GCM authentication failed")
        }
        plaintext.removeLast()
        return plaintext
    }
}

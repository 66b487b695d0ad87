import COpenSSL

/// HMAC-SHA256 (RFC 2104) through OpenSSL's EVP_MAC API.
public enum HMACSHA256 {
    /// The 32-byte HMAC-SHA256 of `message` under `key` (any key length, including empty).
    public static func authenticate(key: [UInt8], message: [UInt8]) -> [UInt8] {
        guard let context = EVP_MAC_CTX_new(FetchedAlgorithms.hmac) else { fatalError("HMAC context allocation failed") }
        defer { EVP_MAC_CTX_free(context) }
        let initialized: Int32 = "SHA256".withCString { digestName in
            var parameters = [
                OSSL_PARAM_construct_utf8_string(herald_PARAM_MAC_DIGEST(), UnsafeMutablePointer(mutating: digestName), 0),
                herald_OSSL_PARAM_END(),
            ]
            // A non-NULL key pointer even for an empty key: OpenSSL treats NULL as "keep the old key".
            return withNonNullBytes(key) { keyPointer, keyCount in
                EVP_MAC_init(context, keyPointer, keyCount, &parameters)
            }
        }
        guard initialized == 1 else { fatalError("HMAC-SHA256 initialization failed inside OpenSSL") }
        let updated = message.withUnsafeBufferPointer { buffer in
            buffer.isEmpty ? 1 : EVP_MAC_update(context, buffer.baseAddress, buffer.count)
        }
        guard updated == 1 else { fatalError("HMAC-SHA256 failed inside OpenSSL") }
        return [UInt8](unsafeUninitializedCapacity: SHA256.byteCount) { output, count in
            var length = 0
            guard EVP_MAC_final(context, output.baseAddress, &length, SHA256.byteCount) == 1, length == SHA256.byteCount else {
                fatalError("HMAC-SHA256 failed inside OpenSSL")
            }
            count = length
        }
    }
}

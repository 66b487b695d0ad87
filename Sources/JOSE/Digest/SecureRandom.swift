import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// `count` random bytes. Traps if the CSPRNG fails: continuing would hand out guessable
    /// tokens and keys, which is worse than stopping.
    public static func bytes(count: Int) -> [UInt8] {
        precondition(count >= 0, "negative random byte count")
        if count == 0 { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var offset = 0
            while offset < count {
                // RAND_bytes takes an Int32 length; chunk so any Int count works.
                let chunk = min(count - offset, Int(Int32.max))
                guard RAND_bytes(buffer.baseAddress! + offset, Int32(chunk)) == 1 else {
                    fatalError("OpenSSL CSPRNG failure (RAND_bytes)")
                }
                offset += chunk
            }
            initialized = count
        }
    }

    /// A base64url token of `byteCount` random bytes (32 bytes = 256 bits by default).
    public static func token(byteCount: Int = 32) -> String {
        Base64URL.encode(bytes(count: byteCount))
    }
}

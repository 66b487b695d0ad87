import COpenSSL

/// Converts ES256 signatures between JOSE's raw r‖s (RFC 7518 §3.4) and the DER
/// `ECDSA-Sig-Value` OpenSSL signs and verifies.
enum ECDSASignature {
    /// Byte length of r and of s for P-256.
    static let componentByteCount = 32

    /// DER for a raw 64-byte r‖s; nil if the input is not 64 bytes.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 2 * componentByteCount else { return nil }
        return raw.withUnsafeBufferPointer { buffer -> [UInt8]? in
            let base = buffer.baseAddress!
            guard let r = BN_bin2bn(base, Int32(componentByteCount), nil) else { return nil }
            guard let s = BN_bin2bn(base + componentByteCount, Int32(componentByteCount), nil) else {
                BN_free(r)
                return nil
            }
            guard let signature = ECDSA_SIG_new() else {
                BN_free(r)
                BN_free(s)
                return nil
            }
            defer { ECDSA_SIG_free(signature) }
            // set0 takes ownership of r and s only when it succeeds.
            guard ECDSA_SIG_set0(signature, r, s) == 1 else {
                BN_free(r)
                BN_free(s)
                return nil
            }
            let length = i2d_ECDSA_SIG(signature, nil)
            guard length > 0 else { return nil }
            var der = [UInt8](repeating: 0, count: Int(length))
            let written = der.withUnsafeMutableBufferPointer { output -> Int32 in
                var cursor = output.baseAddress
                return i2d_ECDSA_SIG(signature, &cursor)
            }
            return written == length ? der : nil
        }
    }

    /// Raw 64-byte r‖s for a DER signature; nil if it is not well-formed or r or s exceeds 32 bytes.
    static func raw(fromDER der: [UInt8]) -> [UInt8]? {
        der.withUnsafeBufferPointer { buffer -> [UInt8]? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else {
                ERR_clear_error()
                return nil
            }
            defer { ECDSA_SIG_free(signature) }
            guard cursor == buffer.baseAddress.map({ $0 + buffer.count }) else { return nil }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            guard let r, let s else { return nil }
            var raw = [UInt8](repeating: 0, count: 2 * componentByteCount)
            let ok = raw.withUnsafeMutableBufferPointer { output in
                BN_bn2binpad(r, output.baseAddress, Int32(componentByteCount)) == Int32(componentByteCount)
                    && BN_bn2binpad(s, output.baseAddress! + componentByteCount, Int32(componentByteCount)) == Int32(componentByteCount)
            }
            return ok ? raw : nil
        }
    }
}

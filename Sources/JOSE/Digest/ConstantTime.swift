import COpenSSL

/// Comparison whose duration does not depend on where two secrets differ.
public enum ConstantTime {
    /// True when `a` and `b` are byte-for-byte equal; false when their lengths differ (lengths are
    /// not secret: callers compare digests or MACs of fixed size).
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { left in
            b.withUnsafeBytes { right in
                CRYPTO_memcmp(left.baseAddress, right.baseAddress, left.count) == 0
            }
        }
    }
}

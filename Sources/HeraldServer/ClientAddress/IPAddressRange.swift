#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address range in CIDR notation ("10.0.0.0/8", "::1", "192.0.2.7").
struct IPAddressRange: Sendable, Equatable {
    let network: [UInt8]
    let prefixLength: Int

    /// Parses an address with an optional `/prefix`; nil when either part is invalid.
    init?(cidr: String) {
        let parts = cidr.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddressRange.bytes(of: String(parts[0])) else { return nil }
        let maxPrefix = address.count * 8
        if parts.count == 2 {
            guard let prefix = Int(parts[1]), (0...maxPrefix).contains(prefix) else { return nil }
            prefixLength = prefix
        } else {
            prefixLength = maxPrefix
        }
        network = address
    }

    /// Whether `address` (textual IPv4/IPv6) falls inside this range.
    func contains(_ address: String) -> Bool {
        guard let candidate = IPAddressRange.bytes(of: address), candidate.count == network.count else { return false }
        var remaining = prefixLength
        for index in 0..<network.count where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if candidate[index] & mask != network[index] & mask { return false }
            remaining -= bits
        }
        return true
    }

    /// The 4 or 16 bytes of a textual address, through inet_pton.
    static func bytes(of text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { Array($0) }
        }
        return nil
    }
}

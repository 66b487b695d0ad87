#if canImport(Glibc)
import Glibc
#endif

/// The client key failed logins are counted under. An exact address string would let one
/// client count as many: `::ffff:203.0.113.7` and `203.0.113.7` are one IPv4 client, and one
/// IPv6 subscriber is normally handed a whole /64 to rotate through at will. So IPv4-mapped
/// addresses count as their IPv4 address and IPv6 addresses by their /64. Failed logins
/// and the request limits of `/token`, session refresh and `/authorize` share it.
public enum RateLimitKey {
    /// The key `ip` is counted under.
    public static func key(forClientIP ip: String) -> String {
        var v6 = in6_addr()
        guard ip.utf8.count < 64, inet_pton(AF_INET6, ip, &v6) == 1 else { return ip }
        var bytes = withUnsafeBytes(of: &v6) { [UInt8]($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        for index in 8..<16 { bytes[index] = 0 }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}

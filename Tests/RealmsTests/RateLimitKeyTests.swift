import Realms
import Testing

/// Issue #20: behind a trusted proxy the rate-limit key was the exact IP string, so one client
/// could spread its failures over spellings of its address or over its IPv6 /64.
@Suite("Rate-limit key")
struct RateLimitKeyTests {
    @Test func ipv4MappedAddressesCountAsTheirIPv4Address() {
        #expect(RateLimitKey.key(forClientIP: "::ffff:203.0.113.7") == "203.0.113.7")
        #expect(RateLimitKey.key(forClientIP: "::FFFF:cb00:7107") == "203.0.113.7")
        #expect(RateLimitKey.key(forClientIP: "203.0.113.7") == "203.0.113.7")
    }

    @Test func ipv6AddressesCountByTheirSlash64() {
        let one = RateLimitKey.key(forClientIP: "2001:db8:1:2::1")
        #expect(one == "2001:db8:1:2::/64")
        #expect(RateLimitKey.key(forClientIP: "2001:0DB8:0001:0002:ffff:ffff:ffff:ffff") == one)
        #expect(RateLimitKey.key(forClientIP: "2001:db8:1:3::1") != one)
        #expect(RateLimitKey.key(forClientIP: "::1") == "0:0:0:0::/64")
    }

    @Test func anythingElseIsKeptAsIs() {
        #expect(RateLimitKey.key(forClientIP: "not-an-ip") == "not-an-ip")
    }
}

import Foundation
import HeraldTestSupport
import Login
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

    /// The limiter counts under the key: failures from two addresses of one /64, and from both
    /// spellings of one IPv4 client, reach one limit.
    @Test func theLimiterCountsOneClientUnderOneKey() async throws {
        try await FreshDatabase.with(.sqlite, migrations: LoginAttemptLimiter.migrations) { database in
            let limiter = LoginAttemptLimiter(database: database, now: { Date(timeIntervalSince1970: 1_000_000) })
            let limit = RateLimit(failuresPerWindow: 2, windowSeconds: 300)
            func blocked(_ clientIP: String) async throws -> Bool {
                try await database.read { db in
                    try limiter.retryAfter(db, realmID: "acme", clientIP: clientIP, limit: limit)
                } != nil
            }
            try await limiter.recordFailure(realmID: "acme", clientIP: "2001:db8:1:2::1", limit: limit)
            try await limiter.recordFailure(realmID: "acme", clientIP: "2001:db8:1:2::beef", limit: limit)
            #expect(try await blocked("2001:db8:1:2::77"))
            #expect(try await !blocked("2001:db8:1:3::1"))
            try await limiter.recordFailure(realmID: "acme", clientIP: "203.0.113.7", limit: limit)
            try await limiter.recordFailure(realmID: "acme", clientIP: "::ffff:203.0.113.7", limit: limit)
            #expect(try await blocked("203.0.113.7"))
        }
    }
}

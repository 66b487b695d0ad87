import Foundation
import HeraldTestSupport
import Login
import Realms
import Storage
import Testing

/// Issue #20, at the limiter: failed logins are counted under `RateLimitKey` (Realms), not the
/// exact address string, so one client cannot spread its failures over spellings of its address.
@Suite("Login attempt limiter")
struct LoginAttemptLimiterTests {
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

    /// Failures from one client arrive together when someone guesses in parallel: each counts,
    /// none is retried (a serialization failure per overlap, and at worst a 503 after the last
    /// retry, under SERIALIZABLE), so all 64 cost what one costs, 64 times.
    @Test func concurrentFailuresOfOneClientAllCountWithoutRetries() async throws {
        try await FreshDatabase.with(.postgres, migrations: LoginAttemptLimiter.migrations) { database in
            let postgres = try #require(database as? PostgresDatabase)
            let limiter = LoginAttemptLimiter(database: database, now: { Date(timeIntervalSince1970: 1_000_000) })
            let limit = RateLimit(failuresPerWindow: 1000, windowSeconds: 300)
            // The first write on a fresh pool also pays for what a connection does once.
            try await limiter.recordFailure(realmID: "acme", clientIP: "203.0.113.7", limit: limit)
            let first = postgres.roundTrips.total
            try await limiter.recordFailure(realmID: "acme", clientIP: "203.0.113.7", limit: limit)
            let one = postgres.roundTrips.total - first
            let before = postgres.roundTrips.total, conflictsBefore = postgres.writeConflicts.total
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<64 {
                    group.addTask { try await limiter.recordFailure(realmID: "acme", clientIP: "203.0.113.7", limit: limit) }
                }
                try await group.waitForAll()
            }
            #expect(postgres.roundTrips.total - before == 64 * one)
            #expect(postgres.writeConflicts.total == conflictsBefore)
            let failures = try await database.read { db in
                try db.queryOne("SELECT failures FROM login_failures", [])?.int("failures")
            }
            #expect(failures == 66)
        }
    }
}

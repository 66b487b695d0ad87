import Foundation
import HeraldTestSupport
import HTTPServer
import Login
import Storage
import Testing
@testable import HeraldServer

/// The realm overview's sign-in counts: counted in memory per login, added to `login_counts`
/// as deltas in the background. Two `LoginCounts` on one database stand for two nodes.
@Suite("Login counts")
struct LoginCountsTests {
    /// A clock ten minutes into an hour.
    static func clock() -> TestClock { TestClock(Date(timeIntervalSince1970: 1_800_000_600)) }

    static func total(_ database: any Database, realm: String) async throws -> Int64 {
        try await database.read { db in
            try db.queryOne("SELECT CAST(COALESCE(SUM(count), 0) AS INTEGER) AS total FROM login_counts WHERE realm_id = ?", .text(realm))?
                .int("total") ?? -1
        }
    }

    static func rowCount(_ database: any Database) async throws -> Int64 {
        try await database.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM login_counts")?.int("n") ?? -1 }
    }

    @Test("two nodes' deltas add up in one row per hour and labels", arguments: Backend.allCases)
    func nodesAddUp(backend: Backend) async throws {
        try await FreshDatabase.with(backend, migrations: LoginCounts.migrations) { database async throws in
            let clock = Self.clock()
            let first = LoginCounts(database: database, now: clock.closure)
            let second = LoginCounts(database: database, now: clock.closure)
            for _ in 0..<3 { first.record(realmID: "acme", provider: "apple", door: "native", outcome: "success", reason: "existing") }
            second.record(realmID: "acme", provider: "apple", door: "native", outcome: "success", reason: "existing")
            second.record(realmID: "acme", provider: "apple", door: "web", outcome: "rejected", reason: "audience")
            #expect(try await Self.rowCount(database) == 0, "nothing is written per login")
            try await first.share()
            try await second.share()
            try await first.share()  // nothing pending: changes nothing
            let buckets = try await first.buckets(realmID: "acme", from: 1_800_000_000 - 86_400, slotSeconds: 3600)
            #expect(buckets == [
                LoginCounts.Bucket(start: 1_800_000_000, provider: "apple", door: "native", outcome: "success",
                                   reason: "existing", count: 4),
                LoginCounts.Bucket(start: 1_800_000_000, provider: "apple", door: "web", outcome: "rejected",
                                   reason: "audience", count: 1),
            ])
            // The next hour is a bucket of its own.
            clock.advance(by: 3600)
            first.record(realmID: "acme", provider: "apple", door: "native", outcome: "success", reason: "existing")
            try await first.share()
            #expect(try await Self.rowCount(database) == 3)
            #expect(try await Self.total(database, realm: "acme") == 6)
            // Read by day, the two hours are one slot.
            let days = try await first.buckets(realmID: "acme", from: 1_800_000_000 - 86_400 * 2, slotSeconds: 86_400)
            #expect(days.map(\.count) == [5, 1] && days.allSatisfy { $0.start == 1_800_000_000 })
        }
    }

    @Test("past its capacity a node drops new buckets and says how many logins it dropped", arguments: Backend.allCases)
    func capacityIsBounded(backend: Backend) async throws {
        try await FreshDatabase.with(backend, migrations: LoginCounts.migrations) { database async throws in
            let counts = LoginCounts(database: database, capacity: 2, now: Self.clock().closure)
            for realm in ["a", "b", "c", "d"] {
                counts.record(realmID: realm, provider: "apple", door: "native", outcome: "success", reason: "created")
            }
            // A bucket already held still counts.
            counts.record(realmID: "a", provider: "apple", door: "native", outcome: "success", reason: "created")
            #expect(counts.pendingCount == 2)
            #expect(try await counts.share() == 2)
            #expect(try await Self.total(database, realm: "a") == 2)
            #expect(try await Self.rowCount(database) == 2)
            #expect(counts.pendingCount == 0)
        }
    }

    @Test("rows older than the retention are purged; reads start at the window's hour", arguments: Backend.allCases)
    func oldRowsArePurged(backend: Backend) async throws {
        try await FreshDatabase.with(backend, migrations: LoginCounts.migrations) { database async throws in
            let clock = Self.clock()
            let counts = LoginCounts(database: database, now: clock.closure)
            counts.record(realmID: "acme", provider: "apple", door: "native", outcome: "success", reason: "created")
            try await counts.share()
            clock.advance(by: Double(LoginCounts.retention) + 3600)
            counts.record(realmID: "acme", provider: "google", door: "web", outcome: "success", reason: "existing")
            try await counts.share()
            let buckets = try await counts.buckets(realmID: "acme", from: 0, slotSeconds: 3600)
            #expect(buckets.map(\.provider) == ["google"])
        }
    }

    @Test("stopping the sharing service shares what was pending")
    func stoppingSharesTheRest() async throws {
        try await FreshDatabase.with(.sqlite, migrations: LoginCounts.migrations) { database async throws in
            let counts = LoginCounts(database: database, now: Self.clock().closure)
            let logger = Logger(level: .error, now: { Date() }, sink: { _ in })
            let sharing = ServiceGroup(services: [LoginCountSharing(counts: counts, logger: logger)], logger: logger)
            sharing.start()
            counts.record(realmID: "acme", provider: "apple", door: "native", outcome: "success", reason: "created")
            await sharing.shutdown()
            #expect(try await Self.total(database, realm: "acme") == 1)
        }
    }

    @Test("the recorder counts attempts tied to a stored realm, not made-up realm ids")
    func recorderCountsOnlyFoundRealms() async throws {
        try await FreshDatabase.with(.sqlite, migrations: LoginCounts.migrations) { database async throws in
            let counts = LoginCounts(database: database, now: Self.clock().closure)
            let recorder = LoginRecorder(door: .native, provider: "apple", metrics: HeraldMetrics(), counts: counts,
                                         logger: Logger(level: .error, now: { Date() }, sink: { _ in }))
            let request = HTTPRequest(method: "POST", path: "/")
            recorder.record(.failure(LoginError(.invalidIdentityToken, providerReason: "audience")), realmID: "acme",
                            clientID: "app", request: request)
            recorder.record(.failure(LoginError(.rateLimited, retryAfterSeconds: 5)), realmID: "acme", clientID: "app",
                            request: request)
            recorder.record(.failure(LoginError(.realmNotFound)), realmID: "made-up", clientID: "app", request: request)
            recorder.record(.failure(LoginError(.badRequest)), realmID: "made-up-too", clientID: "app", request: request)
            try await counts.share()
            let rows = try await database.read { db in
                try db.query("SELECT realm_id, reason, count FROM login_counts ORDER BY reason").map {
                    "\(try $0.string("realm_id")) \(try $0.string("reason")) \(try $0.int("count"))"
                }
            }
            #expect(rows == ["acme audience 1", "acme rate_limited 1"])
        }
    }
}

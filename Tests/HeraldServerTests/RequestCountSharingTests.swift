import Foundation
import HeraldTestSupport
import Storage
import Testing
@testable import HeraldServer

/// Request limits count in memory and share through `request_windows`: two limiters on one
/// database stand for two nodes.
@Suite("Request counts shared between nodes")
struct RequestCountSharingTests {
    static func limits(perIP: Int) -> RequestLimits {
        var limits = RequestLimits()
        limits.perIP = RequestLimit(requests: perIP, windowSeconds: 3600)
        limits.perClient = nil
        return limits
    }

    static func database(in directory: TemporaryDirectory) async throws -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: directory.file("limits.db"), now: { Date() })
        try await database.migrate(RequestRateLimiter.migrations)
        return database
    }

    static func admitted(_ limiter: RequestRateLimiter, _ count: Int) async throws -> Int {
        var admitted = 0
        for _ in 0..<count where try await limiter.admit(realmID: "r", endpoint: .token, clientIP: "192.0.2.1",
                                                          clientID: nil) == nil {
            admitted += 1
        }
        return admitted
    }

    @Test("a node counts what the other admitted once both shared")
    func nodesShareOneBudget() async throws {
        let directory = try TemporaryDirectory()
        let database = try await Self.database(in: directory)
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let first = RequestRateLimiter(database: database, limits: Self.limits(perIP: 5), windowCapacity: 100, now: clock.closure)
        let second = RequestRateLimiter(database: database, limits: Self.limits(perIP: 5), windowCapacity: 100, now: clock.closure)

        #expect(try await Self.admitted(first, 3) == 3)
        try await first.share()
        // The second node has not heard of the first's hits until it shares its own.
        #expect(try await Self.admitted(second, 1) == 1)
        try await second.share()
        #expect(try await Self.admitted(second, 3) == 1, "3 + 1 shared, one left")
        try await second.share()
        // The first node learns of the second's hits with its next exchange, so until then it
        // admits past the limit: one sharing interval of its own traffic at most.
        #expect(try await Self.admitted(first, 1) == 1)
        try await first.share()
        #expect(try await Self.admitted(first, 2) == 0, "the first node learned the second's two")
        let hits = try await database.read { db in
            try db.queryOne("SELECT hits FROM request_windows WHERE subject = 'ip:192.0.2.1'")?.int("hits")
        }
        #expect(hits == 6)
        await database.close()
    }

    @Test("with the table full, new subjects are counted in the database, exactly")
    func fullTableCountsInTheDatabase() async throws {
        let directory = try TemporaryDirectory()
        let database = try await Self.database(in: directory)
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let limiter = RequestRateLimiter(database: database, limits: Self.limits(perIP: 2), windowCapacity: 1, now: clock.closure)
        // The one window the table holds.
        #expect(try await limiter.admit(realmID: "r", endpoint: .token, clientIP: "192.0.2.9", clientID: nil) == nil)
        #expect(try await Self.admitted(limiter, 4) == 2)
        let rows = try await database.read { db in
            try db.queryOne("SELECT hits FROM request_windows WHERE subject = 'ip:192.0.2.1'")?.int("hits")
        }
        #expect(rows == 2, "written one request at a time, without waiting for an exchange")
        await database.close()
    }

    @Test("a window that ended is dropped once shared, and a new window admits again")
    func endedWindowsAreDropped() async throws {
        let directory = try TemporaryDirectory()
        let database = try await Self.database(in: directory)
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        let limiter = RequestRateLimiter(database: database, limits: Self.limits(perIP: 1), windowCapacity: 10, now: clock.closure)
        #expect(try await Self.admitted(limiter, 2) == 1)
        clock.advance(by: 3600)
        try await limiter.share()
        #expect(limiter.liveWindowCount == 1, "the ended window is kept until its hit is shared")
        try await limiter.share()
        #expect(limiter.liveWindowCount == 0)
        #expect(try await Self.admitted(limiter, 2) == 1)
        await database.close()
    }
}

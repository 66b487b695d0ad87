import Foundation
import HeraldTestSupport
import Storage
import Testing
@testable import HeraldServer

/// Request limits count in memory and share through `request_windows`: two limiters on one
/// database stand for two nodes.
@Suite("Request counts shared between nodes")
struct RequestCountSharingTests {
    /// One node's limiter of `perIP` requests an hour per address, holding `capacity` windows.
    static func limiter(_ database: any Database, perIP: Int, capacity: Int, clock: TestClock) -> RequestRateLimiter {
        var limits = RequestLimits()
        limits.perIP = RequestLimit(requests: perIP, windowSeconds: 3600)
        limits.perClient = nil
        return RequestRateLimiter(database: database, limits: limits, windowCapacity: capacity, now: clock.closure)
    }

    /// The shared row's count for the address `admitted` uses.
    static func sharedHits(_ database: any Database) async throws -> Int64? {
        try await database.read { db in
            try db.queryOne("SELECT hits FROM request_windows WHERE subject = 'ip:192.0.2.1'")?.int("hits")
        }
    }

    /// A clock at the start of an hour, so one `advance(by: 3600)` ends every window.
    static func clock() -> TestClock { TestClock(Date(timeIntervalSince1970: 1_800_000_000)) }

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
        try await FreshDatabase.with(.sqlite, migrations: RequestRateLimiter.migrations) { database async throws in
            let clock = Self.clock()
            let first = Self.limiter(database, perIP: 5, capacity: 100, clock: clock)
            let second = Self.limiter(database, perIP: 5, capacity: 100, clock: clock)

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
            #expect(try await Self.sharedHits(database) == 6)
        }
    }

    @Test("with the table full, new subjects are counted in the database, exactly")
    func fullTableCountsInTheDatabase() async throws {
        try await FreshDatabase.with(.sqlite, migrations: RequestRateLimiter.migrations) { database async throws in
            let limiter = Self.limiter(database, perIP: 2, capacity: 1, clock: Self.clock())
            // The one window the table holds.
            #expect(try await limiter.admit(realmID: "r", endpoint: .token, clientIP: "192.0.2.9", clientID: nil) == nil)
            #expect(try await Self.admitted(limiter, 4) == 2)
            #expect(try await Self.sharedHits(database) == 2, "written one request at a time, without waiting for an exchange")
        }
    }

    @Test("stopping the sharing loop shares what it had not yet, so the other nodes see a node's last hits")
    func stoppingSharesTheRest() async throws {
        try await FreshDatabase.with(.sqlite, migrations: RequestRateLimiter.migrations) { database async throws in
            let limiter = Self.limiter(database, perIP: 5, capacity: 10, clock: Self.clock())
            let logger = Logger(level: .error, now: { Date() }, sink: { _ in })
            let sharing = ServiceGroup(services: [RequestCountSharing(limiter: limiter, logger: logger)], logger: logger)
            sharing.start()
            #expect(try await Self.admitted(limiter, 2) == 2)
            await sharing.shutdown()
            #expect(try await Self.sharedHits(database) == 2)
        }
    }

    @Test("a window that ended is dropped once shared, and a new window admits again")
    func endedWindowsAreDropped() async throws {
        try await FreshDatabase.with(.sqlite, migrations: RequestRateLimiter.migrations) { database async throws in
            let clock = Self.clock()
            let limiter = Self.limiter(database, perIP: 1, capacity: 10, clock: clock)
            #expect(try await Self.admitted(limiter, 2) == 1)
            clock.advance(by: 3600)
            try await limiter.share()
            #expect(limiter.liveWindowCount == 1, "the ended window is kept until its hit is shared")
            try await limiter.share()
            #expect(limiter.liveWindowCount == 0)
            #expect(try await Self.admitted(limiter, 2) == 1)
        }
    }
}

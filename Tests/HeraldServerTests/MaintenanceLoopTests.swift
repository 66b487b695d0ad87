import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Synchronization
import Testing
import TokenIssuer
@testable import HeraldServer

/// The housekeeping loop itself (what it purges is `EndedSessionPurgeTests`): a round when it
/// starts, then one after every interval. A pacer stands in for the 10-minute wait, so the test
/// decides when an interval has passed and knows when a round is done.
@Suite("Maintenance loop")
struct MaintenanceLoopTests {
    @Test("ended sessions past retention are purged when the loop starts and again after each interval")
    func purgesAtStartAndAfterEachInterval() async throws {
        let clock = TestClock(Date())
        let serverPacer = MaintenancePacer()
        try await NativeLoginFixture.with(clock: clock, maintenancePause: serverPacer.pause) { fixture in
            let database = fixture.herald.application.services.database
            // The server ran its round at start (nothing to purge yet) and waits for the interval.
            try await waitUntil("the server's first round is done") { serverPacer.rounds == 1 }

            try await Self.endSession(fixture, subject: "loop.interval")
            clock.advance(by: Double(EndedSessionPurge.retentionSeconds) + 1)
            // Past retention, but no interval has passed: the loop has not run again.
            #expect(try await Self.sessionCount(database) == 1)
            serverPacer.endInterval()
            try await waitUntil("the round after the interval purged the session") {
                try await Self.sessionCount(database) == 0
            }
            try await waitUntil("the server's second round is done") { serverPacer.rounds == 2 }

            // A loop starting while such a session exists purges it in its first round, before
            // any interval; the server's loop is parked meanwhile, so only this one can.
            try await Self.endSession(fixture, subject: "loop.start")
            clock.advance(by: Double(EndedSessionPurge.retentionSeconds) + 1)
            #expect(try await Self.sessionCount(database) == 1)
            let pacer = MaintenancePacer()
            let loop = Self.loop(fixture.herald.application.services, pause: pacer.pause)
            loop.start()
            try await waitUntil("the round at start is done") { pacer.rounds == 1 }
            #expect(try await Self.sessionCount(database) == 0)
            await loop.shutdown()
            #expect(serverPacer.rounds == 2)
        }
    }

    /// A maintenance loop of the test's own over the server's database, run by its own group.
    static func loop(_ services: HeraldServices, pause: @escaping @Sendable () async -> Void) -> ServiceGroup {
        ServiceGroup(services: [MaintenanceLoop(database: services.database,
                                                eventRetentionDays: services.configuration.eventRetentionDays,
                                                logger: services.logger, now: services.now, pause: pause)],
                     logger: services.logger)
    }

    /// Signs `subject` in and out: one session, ended now.
    private static func endSession(_ fixture: NativeLoginFixture, subject: String) async throws {
        let login = try await fixture.loginOK(subject: subject)
        let accessToken = login["accessToken"]?.stringValue ?? ""
        try expectStatus(200, await fixture.send("POST", "/api/auth/acme/session/logout",
                                                 headers: [("Authorization", "Bearer \(accessToken)")]))
    }

    private static func sessionCount(_ database: any Database) async throws -> Int64? {
        try await database.read { try $0.queryOne("SELECT COUNT(*) AS n FROM sessions")?.int("n") }
    }
}

/// Paces a `MaintenanceLoop` by hand: its `pause` counts the rounds done, then waits until
/// `endInterval()` (or until the loop is cancelled).
final class MaintenancePacer: Sendable {
    private let intervals: AsyncStream<Void>
    private let intervalEnded: AsyncStream<Void>.Continuation
    private let roundsDone = Atomic<Int>(0)

    init() {
        (intervals, intervalEnded) = AsyncStream.makeStream()
    }

    /// Rounds the loop has finished.
    var rounds: Int { roundsDone.load(ordering: .sequentiallyConsistent) }

    /// The pause to give the loop. One loop only: a stream has one consumer at a time.
    var pause: @Sendable () async -> Void {
        { [self] in
            roundsDone.add(1, ordering: .sequentiallyConsistent)
            var iterator = intervals.makeAsyncIterator()
            _ = await iterator.next()
        }
    }

    /// Lets the loop's next round start.
    func endInterval() {
        intervalEnded.yield()
    }
}

import Foundation
import HeraldTestSupport
import Login
import Realms
import Storage
import Testing

/// The browser-bound states of the web sign-in, under the load a busy sign-in page brings.
@Suite("Web sign-in states")
struct WebSignInStatesTests {
    static let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))

    /// Sign-ins that start and return together each record and take their own state, once,
    /// without a retry: on PostgreSQL each costs exactly what one alone costs.
    @Test func concurrentSignInsEachTakeTheirOwnStateWithoutRetries() async throws {
        let migrations = RealmsSchema.migrations
            + [Migration(module: "web-test", version: 1, name: "states", statements: WebSignInStates.createTable(.apple))]
        try await FreshDatabase.with(.postgres, migrations: migrations) { database in
            _ = try await RealmStore(database: database, now: Self.clock.closure).create(id: "acme", context: ChangeContext(actor: "test"))
            let postgres = try #require(database as? PostgresDatabase)
            let states = WebSignInStates(.apple, database: database, now: Self.clock.closure)
            /// One sign-in: its state recorded for its browser, then taken back by that browser.
            @Sendable func signIn(_ index: Int) async throws -> Bool {
                let pending = WebSignInStates.Pending(clientID: "web-\(index)", downstreamState: nil, returnTo: nil, nonce: "n-\(index)")
                let state = try await states.begin(realmID: "acme", pending, browserBinding: "browser-\(index)")
                return try await states.take(realmID: "acme", state: state, browserBinding: "browser-\(index)") == pending
            }
            // The first sign-in on a fresh pool also pays for what a connection does once.
            #expect(try await signIn(-2))
            let first = postgres.roundTrips.total
            #expect(try await signIn(-1))
            let one = postgres.roundTrips.total - first
            let before = postgres.roundTrips.total, conflictsBefore = postgres.writeConflicts.total
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<64 { group.addTask { try await signIn(index) } }
                for try await taken in group { #expect(taken) }
            }
            #expect(postgres.roundTrips.total - before == 64 * one)
            #expect(postgres.writeConflicts.total == conflictsBefore)
            let left = try await database.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM apple_web_states", [])?.int("n") }
            #expect(left == 0)
        }
    }
}

import Foundation
import HeraldTestSupport
import Realms
import Storage
import Testing
@testable import Grants

/// `DownstreamAuthorizations.begin`, /authorize's write.
@Suite("Grants: beginning an authorization")
struct DownstreamBeginTests {
    static let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))

    @Test("beginning an authorization drops the expired pending authorizations and codes and keeps the live ones, on PostgreSQL in 2 round trips (the DELETEs and the stamp travel with the INSERT, then COMMIT)",
          arguments: Backend.allCases)
    func beginDropsExpiredRows(backend: Backend) async throws {
        try await FreshDatabase.with(backend, migrations: RealmsSchema.migrations + GrantsSchema.migrations) { database in
            _ = try await RealmStore(database: database, now: Self.clock.closure).create(id: "acme", context: ChangeContext(actor: "test"))
            let at = Self.clock.now.unixSeconds
            // Pending rows are dropped 600 s after they expired, codes a day after.
            try await database.write { db in
                for (state, expiresAt) in [("gone", at - DownstreamAuthorizations.pendingTTL), ("kept", at - 1)] {
                    try db.execute("""
                        INSERT INTO pending_authorizations (realm_id, state, client_id, redirect_uri, code_challenge, scope,
                            created_at, expires_at, handle_hash)
                        VALUES ('acme', ?, 'web', 'https://web.example/cb', 'c', 'openid', ?, ?, ?)
                        """, .text(state), .integer(expiresAt - 600), .integer(expiresAt), .blob(Array(state.utf8)))
                }
                for (hash, expiresAt) in [("gone", at - 86_400), ("kept", at - 1)] {
                    try db.execute("""
                        INSERT INTO authorization_codes (code_hash, realm_id, client_id, redirect_uri, code_challenge, scope,
                            account_id, auth_time, created_at, expires_at)
                        VALUES (?, 'acme', 'web', 'https://web.example/cb', 'c', 'openid', 'account', ?, ?, ?)
                        """, .blob(Array(hash.utf8)), .integer(at), .integer(expiresAt - 60), .integer(expiresAt))
                }
            }
            let stamp = try await database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") }
            let roundTrips = (database as? PostgresDatabase)?.roundTrips
            let before = roundTrips?.total
            _ = try await DownstreamAuthorizations(database: database, now: Self.clock.closure)
                .begin(realmID: "acme", GrantsSchemaTests.request(client: "backend", state: "new"), settingsStamp: stamp)
            if let roundTrips, let before {
                // BEGIN, both DELETEs, the stamp and the INSERT in one; then COMMIT.
                #expect(roundTrips.total - before == 2)
            }
            let left = try await database.read { db in
                (try db.query("SELECT state FROM pending_authorizations ORDER BY state", []).map { try $0.string("state") },
                 try db.query("SELECT code_hash FROM authorization_codes", []).map { String(decoding: try $0.bytes("code_hash"), as: UTF8.self) })
            }
            #expect(left.0 == ["kept", "new"])
            #expect(left.1 == ["kept"])
        }
    }

    @Test("a stamp that changed since the caller read the realm and client records nothing and says so; the current one records",
          arguments: Backend.allCases)
    func changedStampRecordsNothing(backend: Backend) async throws {
        try await FreshDatabase.with(backend, migrations: RealmsSchema.migrations + GrantsSchema.migrations) { database in
            _ = try await RealmStore(database: database, now: Self.clock.closure).create(id: "acme", context: ChangeContext(actor: "test"))
            let grants = DownstreamAuthorizations(database: database, now: Self.clock.closure)
            let request = GrantsSchemaTests.request(client: "backend", state: "s-1")
            guard case .settingsChanged = try await grants.begin(realmID: "acme", request, settingsStamp: "a-stamp-of-before") else {
                Issue.record("recorded under a changed stamp")
                return
            }
            let count = { try await database.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM pending_authorizations", [])?.int("n") } }
            #expect(try await count() == 0)
            let stamp = try await database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") }
            guard case .pending = try await grants.begin(realmID: "acme", request, settingsStamp: stamp) else {
                Issue.record("refused under the current stamp")
                return
            }
            #expect(try await count() == 1)
        }
    }

    /// The bench's third-party flow on PostgreSQL answered 503s at 64 connections: under
    /// SERIALIZABLE the garbage DELETEs' index-page locks made concurrent begins fail each other
    /// twelve times over. Under READ COMMITTED none is run twice (its correctness rests on the
    /// upsert's conflict target), so the round trips are exactly two per begin.
    @Test("64 authorizations begun at once on PostgreSQL all record, none run twice")
    func concurrentBeginsNeverRunTwice() async throws {
        try await FreshDatabase.with(.postgres, migrations: RealmsSchema.migrations + GrantsSchema.migrations) { database in
            _ = try await RealmStore(database: database, now: Self.clock.closure).create(id: "acme", context: ChangeContext(actor: "test"))
            let stamp = try await database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") }
            let postgres = try #require(database as? PostgresDatabase)
            let grants = DownstreamAuthorizations(database: database, now: Self.clock.closure)
            let before = postgres.roundTrips.total
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        let request = GrantsSchemaTests.request(client: "backend", state: "s-\(index)")
                        guard case .pending = try await grants.begin(realmID: "acme", request, settingsStamp: stamp) else { return false }
                        return true
                    }
                }
                for try await recorded in group { #expect(recorded) }
            }
            #expect(postgres.roundTrips.total - before == 128)
            let count = try await database.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM pending_authorizations", [])?.int("n") }
            #expect(count == 64)
        }
    }
}

import Foundation
import HeraldTestSupport
import Realms
import Storage
import Testing
@testable import Grants

/// The grants migrations applied to a database that already holds data.
@Suite("Grants: schema migrations")
struct GrantsSchemaTests {
    static let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))

    static func request(client: String, state: String) -> AuthorizationRequest {
        AuthorizationRequest(clientID: client, clientInstanceID: "instance-\(client)", redirectURI: "https://\(client).example/cb",
                             state: state, codeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", scope: ["openid"],
                             nonce: nil)
    }

    /// Issue #39: on PostgreSQL the grants tables' foreign keys to `realms` gave way to a
    /// cascade trigger (migration 4); a realm's deletion still takes its grants, on both stores.
    @Test("deleting a realm removes its pending authorizations and codes, and only those", arguments: Backend.allCases)
    func realmDeletionRemovesGrants(backend: Backend) async throws {
        try await FreshDatabase.with(backend, migrations: RealmsSchema.migrations + GrantsSchema.migrations) { database in
            let realms = RealmStore(database: database, now: Self.clock.closure)
            let at = Self.clock.now.unixSeconds
            for realm in ["acme", "other"] {
                _ = try await realms.create(id: realm, context: ChangeContext(actor: "test"))
                try await database.write { db in
                    try db.execute("""
                        INSERT INTO pending_authorizations (realm_id, client_id, state, redirect_uri, code_challenge, scope,
                            created_at, expires_at)
                        VALUES (?, 'backend', 'state', 'https://backend.example/cb', 'challenge', 'openid', ?, ?)
                        """, .text(realm), .integer(at), .integer(at + 600))
                    try db.execute("""
                        INSERT INTO authorization_codes (code_hash, realm_id, client_id, redirect_uri, code_challenge, scope,
                            account_id, auth_time, created_at, expires_at)
                        VALUES (?, ?, 'backend', 'https://backend.example/cb', 'challenge', 'openid', 'account', ?, ?, ?)
                        """, .blob(Array(realm.utf8)), .text(realm), .integer(at), .integer(at), .integer(at + 60))
                }
            }
            try await realms.delete("acme", context: ChangeContext(actor: "test"))

            let left = try await database.read { db in
                [try db.query("SELECT realm_id FROM pending_authorizations", []).map { try $0.string("realm_id") },
                 try db.query("SELECT realm_id FROM authorization_codes", []).map { try $0.string("realm_id") }]
            }
            #expect(left == [["other"], ["other"]])
            if backend == .postgres {
                let foreignKeys = try await database.read { db in
                    try db.query("""
                        SELECT conname FROM pg_constraint
                        WHERE contype = 'f' AND conrelid IN ('pending_authorizations'::regclass, 'authorization_codes'::regclass)
                        """, []).map { try $0.string("conname") }
                }
                #expect(foreignKeys.isEmpty, "no insert into the grants tables locks the realm's row")
            }
        }
    }

    /// Issue #38 item 9: keyed by (realm, state), a client could claim another backend's
    /// predictable state first. Migration 3 rebuilds the table keyed by (realm, client, state).
    @Test("migration 3 keeps pending authorizations and keys their states per client", arguments: Backend.allCases)
    func migrationKeysPendingStatesPerClient(backend: Backend) async throws {
        let older = RealmsSchema.migrations + GrantsSchema.migrations.filter { $0.version < 3 }
        try await FreshDatabase.with(backend, migrations: older) { database in
            _ = try await RealmStore(database: database, now: Self.clock.closure).create(id: "acme", context: ChangeContext(actor: "test"))
            let at = Self.clock.now.unixSeconds
            try await database.write { db in
                try db.execute("""
                    INSERT INTO pending_authorizations (realm_id, state, client_id, redirect_uri, code_challenge, scope, nonce,
                        created_at, expires_at, handle_hash, client_instance)
                    VALUES ('acme', 'shared', 'web', 'https://web.example/cb', 'challenge', 'openid', 'n-1', ?, ?, ?, 'instance-web')
                    """, .integer(at), .integer(at + 600), .blob([1, 2, 3]))
            }
            try await database.migrate(RealmsSchema.migrations + GrantsSchema.migrations)

            // The pending row came through whole.
            let rows = try await database.read { db in try db.query("SELECT * FROM pending_authorizations", []) }
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(try row.string("realm_id") == "acme" && row.string("client_id") == "web" && row.string("state") == "shared")
            #expect(try row.string("redirect_uri") == "https://web.example/cb" && row.string("code_challenge") == "challenge")
            #expect(try row.string("scope") == "openid" && row.optionalString("nonce") == "n-1")
            #expect(try row.int("created_at") == at && row.int("expires_at") == at + 600)
            #expect(try row.bytes("handle_hash") == [1, 2, 3] && row.optionalString("client_instance") == "instance-web")

            // Another client may hold the same state; the same client still may not.
            let grants = DownstreamAuthorizations(database: database, now: Self.clock.closure)
            _ = try await grants.begin(realmID: "acme", Self.request(client: "backend", state: "shared"))
            await #expect(throws: GrantsError(.invalidRequest, "state is already pending")) {
                _ = try await grants.begin(realmID: "acme", Self.request(client: "web", state: "shared"))
            }
            // The handle index is unique again.
            await #expect(throws: StorageError.self) {
                try await database.write { db in
                    try db.execute("""
                        INSERT INTO pending_authorizations (realm_id, state, client_id, redirect_uri, code_challenge, scope,
                            created_at, expires_at, handle_hash)
                        VALUES ('acme', 'other', 'third', 'https://third.example/cb', 'c', 'openid', ?, ?, ?)
                        """, .integer(at), .integer(at + 600), .blob([1, 2, 3]))
                }
            }
            // Deleting the realm still takes its pending authorizations with it.
            try await RealmStore(database: database, now: Self.clock.closure).delete("acme", context: ChangeContext(actor: "test"))
            let left = try await database.read { db in try db.query("SELECT state FROM pending_authorizations", []) }
            #expect(left.isEmpty)
        }
    }
}

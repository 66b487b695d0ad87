import Foundation
import HeraldTestSupport
import Realms
import Storage
import Testing
@testable import TokenIssuer

/// Tokens migration v10 rebuilds `refresh_tokens` on SQLite as a `WITHOUT ROWID` table
/// (PostgreSQL records it and runs nothing): what was there before stays, with its indexes, its
/// foreign key and its cascade.
@Suite("Session tables upgrade")
struct SessionTablesUpgradeTests {
    static let all = RealmsSchema.migrations + TokenIssuerSchema.migrations
    static let beforeV10 = all.filter { !($0.module == "tokens" && $0.version >= 10) }

    @Test("sessions and refresh tokens of before v10 are kept, with their indexes, keys and cascade",
          arguments: Backend.allCases)
    func rowsSurviveTheRebuild(backend: Backend) async throws {
        let fresh = try await FreshDatabase(backend, migrations: Self.beforeV10)
        let database = fresh.database
        _ = try await RealmStore(database: database, now: { Date() }).create(id: "acme", context: ChangeContext(actor: "test"))
        let accountID = try await database.write { db in
            try AccountStore.insert(db, realmID: "acme", NewAccount(email: "ada@example.com"), at: 1).id
        }
        try await database.write { db in
            for (id, revokedAt) in [("s-live", SQLValue.null), ("s-revoked", .integer(5))] {
                try db.execute("""
                    INSERT INTO sessions (id, realm_id, client_id, account_id, scope, client_ip, ip_binding, auth_time,
                        access_token_ttl, created_at, expires_at, revoked_at, revoke_reason, client_instance,
                        refresh_idle_ttl, idle_expires_at)
                    VALUES (?, 'acme', 'web', ?, 'openid', '192.0.2.1', 1, 2, 900, 3, 4, ?, ?, 'instance-1', 600, 603)
                    """, .text(id), .text(accountID), revokedAt, revokedAt == .null ? .null : .text("logout"))
            }
            try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at, rotated_at) VALUES (?, 's-live', 3, 4)",
                           .blob(Array(repeating: 1, count: 32)))
            try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at, verifier_hash) VALUES (?, 's-live', 4, ?)",
                           .blob(Array(repeating: 2, count: 16)), .blob(Array(repeating: 3, count: 32)))
            try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 's-revoked', 3)",
                           .blob(Array(repeating: 4, count: 32)))
        }
        let rowsBefore = try await Self.snapshot(database)
        let indexesBefore = try await Self.indexes(database, backend: backend)

        try await database.migrate(Self.all)

        #expect(try await Self.snapshot(database) == rowsBefore)
        #expect(try await Self.indexes(database, backend: backend) == indexesBefore)
        if backend == .sqlite {
            let table = try await database.read { db in
                try db.queryOne("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'refresh_tokens'")?.string("sql")
            }
            #expect(table?.hasSuffix("WITHOUT ROWID") == true, "\(table ?? "")")
        }
        // SQLite's key still holds (PostgreSQL has none since v9): a token of no session is refused.
        if backend == .sqlite {
            await #expect(throws: StorageError.self) {
                try await database.write { db in
                    try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 'none', 1)",
                                   .blob([9]))
                }
            }
        }
        // A session's tokens go with it (SQLite's cascade, PostgreSQL's trigger).
        try await database.write { db in try db.execute("DELETE FROM sessions WHERE id = 's-revoked'") }
        let left = try await database.read { db in
            try db.query("SELECT session_id FROM refresh_tokens ORDER BY created_at").map { try $0.string("session_id") }
        }
        #expect(left == ["s-live", "s-live"])
        await fresh.close()
    }

    /// Every column of both tables, as text, in key order.
    static func snapshot(_ database: any Database) async throws -> [[String]] {
        try await database.read { db in
            let sessions = try db.query("SELECT * FROM sessions ORDER BY id")
            let tokens = try db.query("SELECT * FROM refresh_tokens ORDER BY token_hash")
            return (sessions + tokens).map { row in row.columns.sorted().map { "\($0)=\(String(describing: row[$0]))" } }
        }
    }

    /// The names of the indexes on both tables (the primary keys' aside).
    static func indexes(_ database: any Database, backend: Backend) async throws -> [String] {
        let sql = backend == .sqlite
            ? "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('sessions', 'refresh_tokens') AND sql IS NOT NULL ORDER BY name"
            : "SELECT indexname AS name FROM pg_indexes WHERE tablename IN ('sessions', 'refresh_tokens') AND indexname NOT LIKE '%_pkey' ORDER BY indexname"
        return try await database.read { db in try db.query(sql).map { try $0.string("name") } }
    }
}

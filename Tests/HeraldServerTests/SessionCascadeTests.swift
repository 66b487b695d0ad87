import Foundation
import HeraldTestSupport
import Realms
import Testing
@testable import HeraldServer

/// What hangs off a deleted realm goes with it: by foreign keys on SQLite, by the cascade
/// triggers that replace the hot foreign keys on PostgreSQL (tokens migration v9).
@Suite("Session cascades")
struct SessionCascadeTests {
    @Test("deleting a realm removes its accounts' sessions and refresh tokens, and only those", arguments: Backend.allCases)
    func realmDeletionRemovesSessions(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            try await fixture.createRealm("other")
            let database = fixture.herald.application.services.database
            // An account of the other realm with a session, written as TokenIssuer writes one: they must survive.
            try await database.write { db in
                let account = try AccountStore.insert(db, realmID: "other", NewAccount(email: "kept@example.com"), at: 0)
                try db.execute("""
                    INSERT INTO sessions (id, realm_id, client_id, account_id, scope, client_ip, ip_binding, auth_time,
                        access_token_ttl, created_at, expires_at)
                    VALUES ('kept-session', 'other', 'app', ?, '', '', 0, 0, 900, 0, 4102444800)
                    """, .text(account.id))
                try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, 'kept-session', 0)",
                               .blob([1, 2, 3]))
            }
            let first = try await fixture.loginOK(subject: "cascade.one")
            try expectStatus(200, await fixture.refresh(first.string("refreshToken")))
            try await fixture.loginOK(subject: "cascade.two")
            /// Sessions and refresh tokens, in that order.
            let counts = { @Sendable () async throws -> [Int64] in
                try await database.read { db in
                    [try db.queryOne("SELECT COUNT(*) AS n FROM sessions")?.int("n") ?? -1,
                     try db.queryOne("SELECT COUNT(*) AS n FROM refresh_tokens")?.int("n") ?? -1]
                }
            }
            #expect(try await counts() == [3, 4])

            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme", reason: "tenant left"))
            #expect(try await counts() == [1, 1], "only the other realm's session and its token are left")
            let left = try await database.read { db in try db.queryOne("SELECT id FROM sessions")?.string("id") }
            #expect(left == "kept-session")
        }
    }
}

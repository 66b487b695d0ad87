import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// Issue #36 item 2 through HTTP: when the connection to PostgreSQL is lost after a login's or
/// a refresh's COMMIT was sent (a failover, a switchover), Herald reads on the database as it
/// is now whether that transaction committed and answers 2xx with what it committed (or runs
/// it again), instead of a 503 whose retry would look like a replayed token or a reused
/// refresh token and sign the user out.
@Suite("Lost COMMIT answers: login and refresh")
struct LostCommitLoginTests {
    private static func losses(_ fixture: NativeLoginFixture) throws -> PostgresConnectionLosses {
        guard let postgres = fixture.herald.application.services.database as? PostgresDatabase else {
            throw TestClientError("not on PostgreSQL")
        }
        return postgres.connectionLosses
    }

    private static func target(_ fixture: NativeLoginFixture) throws -> TestPostgresDatabase {
        guard let target = fixture.herald.postgres else { throw TestClientError("not on PostgreSQL") }
        return target
    }

    @Test("a native login whose COMMIT lost its answer gets 200 and its session, once; its token stays used",
          arguments: [LostCommitTrap.Outcome.committed, .notCommitted])
    func nativeLogin(_ outcome: LostCommitTrap.Outcome) async throws {
        try await NativeLoginFixture.with(backend: .postgres) { fixture in
            let trap = try await LostCommitTrap.arm(outcome, onInsertInto: "sessions", of: try Self.target(fixture))
            let nonce = fixture.freshNonce()
            let token = fixture.token(subject: "lost.commit", nonce: nonce)
            let login = try await fixture.login(token: token, nonce: nonce)
            try await trap.finish()
            #expect(login.status == 200, "\(login.status) \(login.text)")
            #expect(try await fixture.me(login.string("accessToken")).status == 200)
            let sessions = try await fixture.herald.application.services.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM sessions")?.int("n")
            }
            #expect(sessions == 1)
            // The claim committed with the session: the same token again is a replay.
            let again = try await fixture.login(token: token, nonce: nonce)
            #expect(again.status == 401)
            #expect(again.json["details"]?["reason"] == "replayed")
            let losses = try Self.losses(fixture)
            #expect(losses.unknownCommitOutcomes == 0)
            switch outcome {
            case .committed: #expect(losses.lostCommitsFoundCommitted == 1)
            case .notCommitted: #expect(losses.lostCommitsFoundNotCommitted == 1)
            }
        }
    }

    @Test("a refresh whose COMMIT lost its answer gets 200 with the rotated token, and the session lives on")
    func refresh() async throws {
        try await NativeLoginFixture.with(backend: .postgres) { fixture in
            let login = try await fixture.loginOK(subject: "lost.refresh")
            let trap = try await LostCommitTrap.arm(.committed, onInsertInto: "refresh_tokens", of: try Self.target(fixture))
            let refreshed = try await fixture.refresh(login["refreshToken"]?.stringValue ?? "")
            #expect(try await trap.finish() == 1)
            #expect(refreshed.status == 200, "\(refreshed.status) \(refreshed.text)")
            // The token answered is the one that committed: it rotates again, and nothing was
            // taken for reuse (a reuse would have revoked the session).
            let next = try await fixture.refresh(refreshed.string("refreshToken"))
            #expect(next.status == 200, "\(next.status) \(next.text)")
            #expect(try await fixture.me(next.string("accessToken")).status == 200)
            let revoked = try await fixture.herald.application.services.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM sessions WHERE revoked_at IS NOT NULL")?.int("n")
            }
            #expect(revoked == 0)
            #expect(try Self.losses(fixture).lostCommitsFoundCommitted == 1)
        }
    }
}

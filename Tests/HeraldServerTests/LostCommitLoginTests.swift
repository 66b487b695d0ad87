import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// Issue #36 item 2 through HTTP: when the connection to PostgreSQL is lost after the COMMIT of
/// a login, a refresh or a code exchange was sent (a failover, a switchover), Herald reads on the database as it
/// is now whether that transaction committed and answers 2xx with what it committed (or runs
/// it again), instead of a 503 whose retry would look like a replayed token, a reused refresh
/// token or a reused code, and sign the user out.
@Suite("Lost COMMIT answers: login, refresh and code exchange")
struct LostCommitLoginTests {
    private static func losses(_ fixture: NativeLoginFixture) throws -> PostgresConnectionLosses {
        try losses(fixture.herald)
    }

    private static func losses(_ herald: RunningHerald) throws -> PostgresConnectionLosses {
        guard let postgres = herald.application.services.database as? PostgresDatabase else {
            throw TestClientError("not on PostgreSQL")
        }
        return postgres.connectionLosses
    }

    private static func target(_ fixture: NativeLoginFixture) throws -> TestPostgresDatabase {
        try target(fixture.herald)
    }

    private static func target(_ herald: RunningHerald) throws -> TestPostgresDatabase {
        guard let target = herald.postgres else { throw TestClientError("not on PostgreSQL") }
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

    @Test("a code exchange whose COMMIT lost its answer gets 200 and one session; the code stays used",
          arguments: [LostCommitTrap.Outcome.committed, .notCommitted])
    func codeExchange(_ outcome: LostCommitTrap.Outcome) async throws {
        try await RunningHerald.with(backend: .postgres) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            let trap = try await LostCommitTrap.arm(outcome, onInsertInto: "sessions", of: try Self.target(herald))
            let exchanged = try await fixture.exchange(code)
            try await trap.finish()
            #expect(exchanged.status == 200, "\(exchanged.status) \(exchanged.text)")
            let accessToken = try #require(exchanged.json["access_token"]?.stringValue)
            #expect(try await fixture.userinfo(accessToken).status == 200)
            let sessions = try await herald.application.services.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM sessions")?.int("n")
            }
            #expect(sessions == 1)
            // The redemption committed with the session: the same code again is a reuse.
            let again = try await fixture.exchange(code)
            #expect(again.status == 400)
            #expect(again.json["error"] == "invalid_grant")
            let losses = try Self.losses(herald)
            #expect(losses.unknownCommitOutcomes == 0)
            switch outcome {
            case .committed: #expect(losses.lostCommitsFoundCommitted == 1)
            case .notCommitted: #expect(losses.lostCommitsFoundNotCommitted == 1)
            }
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Testing
import TokenIssuer
@testable import HeraldServer

@Suite("Ended-session purge")
struct EndedSessionPurgeTests {
    @Test("sessions that ended over 30 days ago go with their refresh tokens; live and recently ended ones stay",
          arguments: [false, true])
    func purgeKeepsWhatIsLiveOrRecent(onPostgres: Bool) async throws {
        let clock = TestClock(Date())
        try await NativeLoginFixture.with(backend: onPostgres ? .postgres : .sqlite, realmFields: ["refreshTokenTTL": 604_800],
                                          clock: clock) { fixture in
            let expiring = try await fixture.loginOK(subject: "purge.expiring")
            let revoked = try await fixture.loginOK(subject: "purge.revoked")
            try expectStatus(200, await fixture.send("POST", "/api/auth/acme/session/logout",
                                                     headers: [("Authorization", "Bearer \(revoked.string("accessToken"))")]))
            clock.advance(by: Double(EndedSessionPurge.retentionSeconds) + 1)
            let live = try await fixture.loginOK(subject: "purge.live")
            try expectStatus(200, await fixture.refresh(live.string("refreshToken")))
            let recentlyRevoked = try await fixture.loginOK(subject: "purge.recent")
            try expectStatus(200, await fixture.send("POST", "/api/auth/acme/session/logout",
                                                     headers: [("Authorization", "Bearer \(recentlyRevoked.string("accessToken"))")]))
            let database = fixture.herald.application.services.database
            let purge = EndedSessionPurge(database: database, now: clock.closure)
            // The revoked session ended at its logout (31 days ago); the other at its 7-day expiry (24 days ago).
            #expect(try await purge.run() == 1)
            clock.advance(by: 7 * 86_400)
            #expect(try await purge.run() == 1)
            #expect(try await purge.run() == 0)
            let left = try await database.read { db in
                (try db.queryOne("SELECT COUNT(*) AS n FROM sessions")?.int("n"),
                 try db.queryOne("SELECT COUNT(*) AS n FROM refresh_tokens")?.int("n"))
            }
            #expect(left.0 == 2, "the live and the recently revoked session")
            #expect(left.1 == 3, "the live session's two tokens and the revoked one's")
            #expect(try await fixture.refresh(expiring.string("refreshToken")).status == 401)
        }
    }
}

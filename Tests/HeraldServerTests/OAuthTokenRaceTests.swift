import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("OAuth: token endpoint under concurrency and account changes")
struct OAuthTokenRaceTests {
    @Test("concurrent exchanges of one code: one session, revoked by the replays, each replay recorded; none keeps working tokens",
          arguments: Backend.allCases)
    func concurrentExchanges(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            let responses = try await withThrowingTaskGroup(of: TestHTTPClient.Response.self) { group in
                for _ in 0..<20 { group.addTask { try await fixture.exchange(code) } }
                var all: [TestHTTPClient.Response] = []
                for try await response in group { all.append(response) }
                return all
            }
            // A code used more than once is denied and everything issued from it revoked
            // (RFC 6749 §4.1.2). The first use burns the code and records its session in one
            // transaction, so it completes, and every other presentation is a replay that
            // finds that session to revoke.
            let winners = responses.filter { $0.status == 200 }
            #expect(winners.count == 1)
            #expect(responses.filter { $0.json["error"] == "invalid_grant" }.count == responses.count - winners.count,
                    "\(responses.map { "\($0.status) \($0.json["error"]?.stringValue ?? "")" })")
            for winner in winners {
                let accessToken = try #require(winner.json["access_token"]?.stringValue)
                #expect(try await fixture.userinfo(accessToken).status == 401)
                let refreshToken = try #require(winner.json["refresh_token"]?.stringValue)
                let refreshed = try await fixture.post("token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken),
                                                                 ("client_id", OAuthFixture.publicClient)])
                #expect(refreshed.json["error"] == "invalid_grant")
            }
            let sessions = try await herald.application.services.database.read { db in
                try db.query("SELECT revoked_at FROM sessions")
            }
            #expect(sessions.count == 1)
            #expect(try sessions.allSatisfy { try $0.optionalInt("revoked_at") != nil })
            let reuses = try await herald.application.services.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM security_events WHERE type = 'authorization_code.reused'")?.int("n")
            }
            #expect(reuses == Int64(responses.count - winners.count))
            let liveRefreshTokens = try await herald.application.services.database.read { db in
                try db.queryOne("""
                    SELECT COUNT(*) AS n FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                    WHERE r.rotated_at IS NULL AND s.revoked_at IS NULL
                    """)?.int("n")
            }
            #expect(liveRefreshTokens == 0)
        }
    }

    @Test("a code of an account disabled since the login is invalid_grant", arguments: Backend.allCases)
    func disabledAccount(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let accountID = try await fixture.account()
            let code = try await fixture.code(accountID: accountID)
            let disabled = try await herald.admin("PATCH", "/api/admin/realms/acme/accounts/\(accountID)",
                                                  json: ["status": "disabled"])
            #expect(disabled.status == 200)
            let response = try await fixture.exchange(code)
            #expect(response.status == 400)
            #expect(response.json["error"] == "invalid_grant")
        }
    }

    @Test("a disabled realm's token, userinfo, revoke and introspect endpoints answer 404", arguments: Backend.allCases)
    func disabledRealm(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false])
            for endpoint in ["token", "revoke", "introspect", "userinfo"] {
                let response = try await fixture.post(endpoint, [("client_id", OAuthFixture.publicClient)])
                #expect(response.status == 404, "\(endpoint)")
            }
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Races over real HTTP that the per-feature suites do not cover. (The ones issue #7 names live
/// beside their features: `SessionTests.concurrentRefreshesHaveOneWinner`,
/// `OAuthTokenRaceTests.concurrentExchanges`, `NativeLoginTests.concurrentFirstLoginsMakeOneAccount`.)
@Suite("Races between refresh, logout and account changes")
struct RaceTests {
    @Test("a refresh racing a logout of its session: once both answered, no token of the family works")
    func refreshRacingLogout() async throws {
        try await NativeLoginFixture.with { fixture in
            // One refresh per round: several would revoke the family as reuse before the logout.
            for round in 0..<10 {
                let login = try await fixture.loginOK()
                let refreshToken = login.string("refreshToken")
                let accessToken = login.string("accessToken")
                let results = await concurrently(2) { index in
                    if index == 0 {
                        return try fixture.herald.client.send("POST", "/api/auth/acme/session/logout", json: [:],
                                                              headers: [("Authorization", "Bearer \(accessToken)")])
                    }
                    return try fixture.refreshBlocking(refreshToken)
                }
                let logout = try results[0].get(), refresh = try results[1].get()
                #expect(logout.status == 200, "round \(round) logout: \(logout.status) \(logout.text)")
                #expect(refresh.status == 200 || refresh.code == "refresh_token_revoked", "round \(round) refresh: \(refresh.status)")
                if refresh.status == 200 {
                    #expect(try await fixture.refresh(refresh.string("refreshToken")).code == "refresh_token_revoked")
                    #expect(try await fixture.me(refresh.string("accessToken")).code == "token_revoked")
                }
                #expect(try await liveRefreshTokens(fixture) == 0, "round \(round)")
            }
        }
    }

    @Test("refreshes of many sessions racing the account's disabling: afterwards every token of the account is refused")
    func refreshesRacingAccountDisable() async throws {
        try await NativeLoginFixture.with { fixture in
            var sessions: [[String: JSONValue]] = []
            for _ in 0..<8 { sessions.append(try await fixture.loginOK(subject: "sub.disable")) }
            let accountID = sessions[0].string("userId")
            let tokens = sessions.map { $0.string("refreshToken") }
            let results = await concurrently(tokens.count + 1) { index in
                if index == tokens.count {
                    return try fixture.herald.client.send("PATCH", "/api/admin/realms/acme/accounts/\(accountID)",
                                                          json: ["status": "disabled"],
                                                          headers: [("Authorization", "Bearer \(RunningHerald.adminToken)")])
                }
                return try fixture.refreshBlocking(tokens[index])
            }
            let responses = try results.map { try $0.get() }
            #expect(responses.last?.status == 200)
            let refreshes = responses.dropLast()
            #expect(refreshes.allSatisfy { $0.status == 200 || $0.code == "account_disabled" || $0.code == "refresh_token_revoked" },
                    "\(refreshes.map { "\($0.status) \($0.code ?? "-")" })")
            // Whatever won its refresh before the disabling committed is dead now, like the rest.
            let newest = zip(tokens, refreshes).map { token, response in
                response.status == 200 ? (response.string("refreshToken"), response.string("accessToken")) : (token, nil)
            }
            // Refused as a dead session or a disabled account: a 500 is a failure, not a refusal.
            for (refreshToken, accessToken) in newest {
                let refresh = try await fixture.refresh(refreshToken)
                #expect(["account_disabled", "refresh_token_revoked"].contains(refresh.code ?? ""), "refresh: \(refresh.status) \(refresh.text)")
                if let accessToken {
                    let me = try await fixture.me(accessToken)
                    #expect(["account_disabled", "token_revoked"].contains(me.code ?? ""), "me: \(me.status) \(me.text)")
                }
            }
            #expect(try await liveRefreshTokens(fixture) == 0)
        }
    }

    /// Refresh tokens that are current (not rotated) in a session that is not revoked.
    private func liveRefreshTokens(_ fixture: NativeLoginFixture) async throws -> Int64? {
        try await fixture.herald.application.services.database.read { db in
            try db.queryOne("""
                SELECT COUNT(*) AS n FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                WHERE r.rotated_at IS NULL AND s.revoked_at IS NULL
                """)?.int("n")
        }
    }
}

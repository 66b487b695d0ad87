import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("First-party session API")
struct SessionTests {
    @Test("refresh rotates; presenting a rotated token again revokes the whole family", arguments: Backend.allCases)
    func refreshRotatesAndReuseRevokesFamily(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK()
            let first = login["refreshToken"]?.stringValue ?? ""
            let rotated = try await fixture.refresh(first)
            #expect(rotated.status == 200)
            #expect(rotated.header("Cache-Control") == "no-store")
            #expect(rotated.json["userId"] == login["userId"])
            #expect(rotated.json["tokenType"] == "Bearer")
            let second = rotated.string("refreshToken")
            #expect(!second.isEmpty && second != first)
            #expect(try await fixture.me(rotated.string("accessToken")).status == 200)

            let reused = try await fixture.refresh(first)
            #expect(reused.status == 401)
            #expect(reused.code == "refresh_token_revoked")
            // The family is gone: the newest refresh token and its access token fail too.
            #expect(try await fixture.refresh(second).code == "refresh_token_revoked")
            let me = try await fixture.me(rotated.string("accessToken"))
            #expect(me.status == 401)
            #expect(me.code == "token_revoked")
        }
    }

    @Test("twenty concurrent refreshes of one token → exactly one 200", arguments: Backend.allCases)
    func concurrentRefreshesHaveOneWinner(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let token = try await fixture.loginOK()["refreshToken"]?.stringValue ?? ""
            let results = await concurrently(20) { _ in try fixture.refreshBlocking(token) }
            let responses = try results.map { try $0.get() }
            let statuses = responses.map(\.status)
            #expect(statuses.filter { $0 == 200 }.count == 1, "\(statuses)")
            #expect(statuses.filter { $0 == 401 }.count == 19, "\(statuses)")
            #expect(responses.filter { $0.status == 401 }.allSatisfy { $0.code == "refresh_token_revoked" })
            // The losers presented a token the winner had just rotated: that is reuse, so the
            // whole family is revoked, the winner's fresh tokens included (issue #7: consistent
            // family, and no live refresh token left behind).
            let winner = try #require(responses.first { $0.status == 200 })
            #expect(try await fixture.refresh(winner.string("refreshToken")).code == "refresh_token_revoked")
            #expect(try await fixture.me(winner.string("accessToken")).code == "token_revoked")
            let state = try await fixture.herald.application.services.database.read { db in
                (try db.query("SELECT revoke_reason FROM sessions").map { try $0.optionalString("revoke_reason") },
                 try db.queryOne("SELECT COUNT(*) AS n FROM refresh_tokens")?.int("n"),
                 try db.queryOne("""
                     SELECT COUNT(*) AS n FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                     WHERE r.rotated_at IS NULL AND s.revoked_at IS NULL
                     """)?.int("n"))
            }
            #expect(state.0 == ["reuse"])
            #expect(state.1 == 2, "the presented token and exactly one replacement")
            #expect(state.2 == 0)
        }
    }

    @Test("refresh with another client, an unknown token or a missing field is refused", arguments: Backend.allCases)
    func refreshRefusals(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let token = try await fixture.loginOK()["refreshToken"]?.stringValue ?? ""
            let otherClient = try await fixture.refresh(token, clientID: NativeLoginFixture.thirdParty)
            #expect(otherClient.status == 401)
            #expect(otherClient.code == "unauthorized")
            #expect(try await fixture.refresh("bm90LWEtcmVhbC10b2tlbi1hdC1hbGwtbm90LWV2ZW4tY2xvc2U").code == "unauthorized")
            let missing = try await fixture.send("POST", "/api/auth/acme/session/refresh", json: ["clientId": "ios-app"])
            #expect(missing.status == 400)
            #expect(missing.fieldProblems["refreshToken"] != nil)
            // The refusals did not burn the token.
            #expect(try await fixture.refresh(token).status == 200)
        }
    }

    @Test("logout revokes the session: me then answers 401 token_revoked and refresh fails", arguments: Backend.allCases)
    func logoutRevokesSession(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK()
            let access = login["accessToken"]?.stringValue ?? ""
            let logout = try await fixture.send("POST", "/api/auth/acme/session/logout",
                                                        json: ["refreshToken": login["refreshToken"] ?? .null],
                                                        headers: [("Authorization", "Bearer \(access)")])
            #expect(logout.status == 200)
            #expect(logout.json["message"] == "Logged out")
            let me = try await fixture.me(access)
            #expect(me.status == 401)
            #expect(me.code == "token_revoked")
            #expect(try await fixture.refresh(login["refreshToken"]?.stringValue ?? "").code == "refresh_token_revoked")
        }
    }

    @Test("me without, or with a malformed or foreign bearer token → 401 unauthorized", arguments: Backend.allCases)
    func meRequiresValidToken(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let none = try await fixture.me(nil)
            #expect(none.status == 401)
            #expect(none.code == "unauthorized")
            #expect(try await fixture.me("garbage").code == "unauthorized")
            // A token of realm acme is not a token of realm other.
            let access = try await fixture.loginOK()["accessToken"]?.stringValue ?? ""
            try await fixture.createRealm("other")
            let foreign = try await fixture.send("GET", "/api/auth/other/me", headers: [("Authorization", "Bearer \(access)")])
            #expect(foreign.status == 401)
            #expect(foreign.code == "unauthorized")
            // A tampered payload fails the signature.
            var parts = access.split(separator: ".").map(String.init)
            var payload = try jwtPayload(access)
            payload["sub"] = "someone-else"
            parts[1] = Base64URL.encode(JSONValue.object(payload).serialized())
            #expect(try await fixture.me(parts.joined(separator: ".")).code == "unauthorized")
        }
    }

    @Test("an expired access token → 401 token_expired; a session past its absolute expiry cannot refresh", arguments: Backend.allCases)
    func expiry(backend: Backend) async throws {
        let clock = TestClock(Date())
        try await NativeLoginFixture.with(backend: backend, realmFields: ["refreshTokenTTL": 3600], clock: clock) { fixture in
            let login = try await fixture.loginOK()
            #expect(login["refreshExpiresIn"] == 3600)
            clock.advance(by: 901)
            let me = try await fixture.me(login["accessToken"]?.stringValue)
            #expect(me.status == 401)
            #expect(me.code == "token_expired")
            let refreshed = try await fixture.refresh(login["refreshToken"]?.stringValue ?? "")
            #expect(refreshed.status == 200)
            #expect(refreshed.json["refreshExpiresIn"] == .number(Double(3600 - 901)))
            clock.advance(by: 3000)
            #expect(try await fixture.refresh(refreshed.string("refreshToken")).code == "refresh_token_expired")
        }
    }

    @Test("disabling an account revokes its sessions: me and refresh answer 403 account_disabled; deleted → 401 account_deleted",
          arguments: Backend.allCases)
    func disabledAndDeletedAccounts(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK()
            let id = login["userId"]?.stringValue ?? ""
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(id)",
                                                       json: ["status": "disabled"]))
            let me = try await fixture.me(login["accessToken"]?.stringValue)
            #expect(me.status == 403)
            #expect(me.code == "account_disabled")
            let refresh = try await fixture.refresh(login["refreshToken"]?.stringValue ?? "")
            #expect(refresh.status == 403)
            #expect(refresh.code == "account_disabled")

            let sessions = try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(id)/sessions")
            #expect(sessions.status == 200)
            #expect(sessions.items.count == 1)
            #expect(sessions.items.first?["revokedAt"]?.isNull == false)

            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)"))
            let deleted = try await fixture.me(login["accessToken"]?.stringValue)
            #expect(deleted.status == 401)
            #expect(deleted.code == "account_deleted")
        }
    }

    @Test("a client with ipBinding binds the session to the issuing IP; refresh from another IP is refused", arguments: Backend.allCases)
    func ipBinding(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend, configure: { $0.trustedProxies = ["127.0.0.1/32"] }) { fixture in
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                       json: ["ipBinding": true]))
            let nonce = fixture.freshNonce()
            let login = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce,
                                                headers: [("X-Forwarded-For", "203.0.113.5")])
            try expectStatus(200, login)
            let elsewhere = try await fixture.refresh(login.string("refreshToken"), headers: [("X-Forwarded-For", "198.51.100.7")])
            #expect(elsewhere.status == 401)
            #expect(elsewhere.code == "unauthorized")
            let home = try await fixture.refresh(login.string("refreshToken"), headers: [("X-Forwarded-For", "203.0.113.5")])
            #expect(home.status == 200)
        }
    }

    @Test("refresh tokens are stored only as their selector and SHA-256 of their verifier", arguments: Backend.allCases)
    func refreshTokensStoredHashed(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let token = try await fixture.loginOK()["refreshToken"]?.stringValue ?? ""
            let parts = token.split(separator: ".").map(String.init)
            try #require(parts.count == 2)
            let stored = try await fixture.herald.application.services.database.read { db in
                try db.query("SELECT token_hash, verifier_hash FROM refresh_tokens").map {
                    [try $0.bytes("token_hash"), try $0.bytes("verifier_hash")]
                }
            }
            #expect(stored == [[Base64URL.decode(parts[0]) ?? [], SHA256.hash(Array(parts[1].utf8))]])
            let verifier = parts[1]
            // Only SQLite has the raw bytes at hand: its database file and write-ahead log. A
            // PostgreSQL server's files belong to the cluster; the rows above are what it stores.
            guard backend == .sqlite else { return }
            let file = try Data(contentsOf: URL(fileURLWithPath: fixture.herald.databasePath))
            let wal = (try? Data(contentsOf: URL(fileURLWithPath: fixture.herald.databasePath + "-wal"))) ?? Data()
            #expect(file.range(of: Data(verifier.utf8)) == nil && wal.range(of: Data(verifier.utf8)) == nil)
        }
    }

    @Test("admin lists an account's sessions without tokens and revokes them all, audited", arguments: Backend.allCases)
    func adminSessions(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let one = try await fixture.loginOK()
            let two = try await fixture.loginOK()
            let id = one["userId"]?.stringValue ?? ""
            let list = try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(id)/sessions")
            #expect(list.status == 200)
            #expect(list.items.count == 2)
            #expect(list.json["nextCursor"] == .null)
            #expect(list.items.allSatisfy { $0["clientId"] == "ios-app" && $0["revokedAt"] == .null })
            #expect(!list.text.contains(one["accessToken"]?.stringValue ?? "-") && !list.text.contains(two["refreshToken"]?.stringValue ?? "-"))

            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)/sessions",
                                                       reason: "lost phone"))
            #expect(try await fixture.me(one["accessToken"]?.stringValue).code == "token_revoked")
            #expect(try await fixture.me(two["accessToken"]?.stringValue).code == "token_revoked")
            let audit = try await fixture.admin("GET", "/api/admin/audit")
            #expect(audit.items.contains { $0["action"] == "account.sessions.revoke" && $0["reason"] == "lost phone" })
            #expect(try await fixture.admin("GET", "/api/admin/realms/acme/accounts/nobody/sessions").status == 404)
            #expect(try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(id)/sessions", token: nil).status == 401)
        }
    }
}

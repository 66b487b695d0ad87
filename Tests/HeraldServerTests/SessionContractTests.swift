import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Tokens of the public third-party client from a code exchange with `openid` (so an ID token).
private func exchangeWithIDToken(_ fixture: OAuthFixture) async throws -> TestHTTPClient.Response {
    let code = try await fixture.code(accountID: try await fixture.account(), ["scope": "openid email profile"])
    let response = try await fixture.exchange(code)
    guard response.status == 200 else { throw TestClientError("exchange: \(response.status) \(response.text)") }
    return response
}

private func me(_ herald: RunningHerald, _ token: String) async throws -> TestHTTPClient.Response {
    try await herald.request("GET", "/api/auth/\(OAuthFixture.realm)/me", headers: [("Authorization", "Bearer \(token)")])
}

@Suite("iOS session contract (issue #16)")
struct SessionContractTests {
    // MARK: - user object

    @Test("login and refresh responses carry user, equal to what /me answers", arguments: Backend.allCases)
    func loginAndRefreshCarryTheMeObject(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK(extra: ["fullName": ["givenName": "Ada", "familyName": "Lovelace"]])
            let me = try await fixture.me(login["accessToken"]?.stringValue)
            try expectStatus(200, me)
            let user = try #require(login["user"])
            #expect(user == .object(me.json))
            #expect(user["id"] == login["userId"])
            #expect(user["email"] == "someone@example.com")
            #expect(user["emailVerified"] == true)
            #expect(user["isPrivateEmail"] == false)
            #expect(user["status"] == "active")
            #expect(user["name"]?["givenName"] == "Ada")
            #expect(user["identities"]?.arrayValue?.first?["provider"] == "apple")

            // An admin change shows in the next refresh's user: it is read then, not remembered.
            let id = login["userId"]?.stringValue ?? ""
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(id)",
                                                       json: ["emailVerified": false]))
            let refreshed = try await fixture.refresh(login["refreshToken"]?.stringValue ?? "")
            try expectStatus(200, refreshed)
            let refreshedUser = try #require(refreshed.json["user"])
            #expect(refreshedUser["emailVerified"] == false)
            #expect(refreshedUser == .object(try await fixture.me(refreshed.string("accessToken")).json))
        }
    }

    @Test("a new user's first login already carries the user it created", arguments: Backend.allCases)
    func firstLoginCarriesTheCreatedUser(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK(subject: "sub.brand-new", email: "new@example.com",
                                                  extra: ["fullName": "Jane Q Public"])
            #expect(login["isNewUser"] == true)
            #expect(login["user"]?["email"] == "new@example.com")
            #expect(login["user"]?["name"] == ["givenName": "Jane Q", "familyName": "Public", "displayName": "Jane Q Public"])
            #expect(login["user"]?["identities"]?.arrayValue?.count == 1)
        }
    }

    @Test("a returning login's user, read with its account, is what /me shows after the login changed the account",
          arguments: Backend.allCases)
    func returningLoginCarriesTheUserAsStored(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let first = try await fixture.loginOK(subject: "sub.hidden", email: nil)
            #expect(first["user"]?["email"]?.stringValue?.hasSuffix("@apple.placeholder") == true)
            // The next login brings an email and a name: the account is filled in this login's
            // transaction, after the account and its identities were read.
            let returning = try await fixture.loginOK(subject: "sub.hidden", email: "found@example.com",
                                                      extra: ["fullName": ["givenName": "Ada"]])
            #expect(returning["isNewUser"] == false)
            let user = try #require(returning["user"])
            #expect(user["email"] == "found@example.com")
            #expect(user["name"]?["givenName"] == "Ada")
            #expect(user["identities"]?.arrayValue?.count == 1)
            let me = try await fixture.me(returning["accessToken"]?.stringValue)
            try expectStatus(200, me)
            #expect(user == .object(me.json))
        }
    }

    @Test("OAuth /token responses keep the RFC 6749 shape: no user, for the code and refresh grants")
    func tokenEndpointHasNoUser() async throws {
        try await RunningHerald.with { herald in
            let fixture = try await OAuthFixture.make(herald)
            let issued = try await exchangeWithIDToken(fixture)
            #expect(issued.json["user"] == nil)
            #expect(issued.json["access_token"] != nil)
            let refreshed = try await fixture.post("token", [("grant_type", "refresh_token"),
                                                             ("refresh_token", issued.string("refresh_token")),
                                                             ("client_id", OAuthFixture.publicClient)])
            try expectStatus(200, refreshed)
            #expect(refreshed.json["user"] == nil)
        }
    }

    // MARK: - fullName

    @Test("a fullName string is stored split at the last space, the display string kept; no space → given name whole")
    func fullNameStringIsSplit() async throws {
        try await NativeLoginFixture.with { fixture in
            let western = try await fixture.loginOK(subject: "sub.western", extra: ["fullName": "  Jane Q Public "])
            let name = try await fixture.me(western["accessToken"]?.stringValue).json["name"]
            #expect(name == ["givenName": "Jane Q", "familyName": "Public", "displayName": "Jane Q Public"])

            let chinese = try await fixture.loginOK(subject: "sub.chinese", email: "zhang@example.com",
                                                    extra: ["fullName": "张三"])
            let chineseName = try await fixture.me(chinese["accessToken"]?.stringValue).json["name"]
            #expect(chineseName == ["givenName": "张三", "familyName": .null, "displayName": "张三"])

            let empty = try await fixture.loginOK(subject: "sub.empty", email: "empty@example.com", extra: ["fullName": ""])
            let emptyName = try await fixture.me(empty["accessToken"]?.stringValue).json["name"]
            #expect(emptyName == ["givenName": .null, "familyName": .null, "displayName": .null])
        }
    }

    // MARK: - wrong_token_type

    @Test("a refresh token presented as an access token → 401 wrong_token_type, the refresh token not used up; an admin token is plain unauthorized",
          arguments: Backend.allCases)
    func refreshAndAdminTokensAreTheWrongType(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK()
            let refreshToken = login["refreshToken"]?.stringValue ?? ""
            let asAccess = try await fixture.me(refreshToken)
            #expect(asAccess.status == 401)
            #expect(asAccess.code == "wrong_token_type")
            #expect(asAccess.json["details"]?["presented"] == "refresh_token")
            #expect(asAccess.header("WWW-Authenticate")?.contains("invalid_token") == true)
            #expect(!asAccess.text.contains(refreshToken))

            // A live admin token is answered exactly as a random string: the public session API
            // is no oracle for admin tokens (issue #38).
            let admin = try await fixture.me(RunningHerald.adminToken)
            #expect(admin.status == 401)
            #expect(admin.code == "unauthorized")
            #expect(admin.json["details"] == nil)
            #expect(!admin.text.contains(RunningHerald.adminToken))
            let adminLogout = try await fixture.send("POST", "/api/auth/acme/session/logout", json: [:],
                                                     headers: [("Authorization", "Bearer \(RunningHerald.adminToken)")])
            #expect(adminLogout.status == 401 && adminLogout.code == "unauthorized")

            // Logout is a bearer route too.
            let logout = try await fixture.send("POST", "/api/auth/acme/session/logout", json: [:],
                                                headers: [("Authorization", "Bearer \(refreshToken)")])
            #expect(logout.code == "wrong_token_type")
            // Looking at the refresh token did not rotate or revoke it.
            try expectStatus(200, await fixture.refresh(refreshToken))
            // A token that is nothing of Herald's stays plain unauthorized.
            #expect(try await fixture.me("bm90LWEtcmVhbC10b2tlbi1hdC1hbGwtbm90LWV2ZW4tY2xvc2U").code == "unauthorized")
        }
    }

    @Test("an ID token presented as an access token → 401 wrong_token_type at /me; /userinfo keeps RFC 6750 invalid_token")
    func idTokenIsTheWrongType() async throws {
        try await RunningHerald.with { herald in
            let fixture = try await OAuthFixture.make(herald)
            let issued = try await exchangeWithIDToken(fixture)
            let idToken = issued.string("id_token")
            #expect(!idToken.isEmpty)
            let response = try await me(herald, idToken)
            #expect(response.status == 401)
            #expect(response.code == "wrong_token_type")
            #expect(response.json["details"]?["presented"] == "id_token")
            let userinfo = try await fixture.userinfo(idToken)
            #expect(userinfo.status == 401)
            #expect(userinfo.json["error"] == "invalid_token")
            // An ID token of another realm is not this realm's: plain unauthorized.
            try await herald.createRealm("other")
            let foreign = try await herald.request("GET", "/api/auth/other/me", headers: [("Authorization", "Bearer \(idToken)")])
            #expect(foreign.code == "unauthorized")
        }
    }

    // MARK: - refresh_token_expired / refresh_token_revoked / token_expired

    @Test("refresh distinguishes refresh_token_revoked (logout, reuse) from refresh_token_expired; the access token says token_expired",
          arguments: Backend.allCases)
    func refreshCodesAreDistinct(backend: Backend) async throws {
        let clock = TestClock(Date())
        try await NativeLoginFixture.with(backend: backend, realmFields: ["refreshTokenTTL": 3600], clock: clock) { fixture in
            // Reuse of a rotated token.
            let first = try await fixture.loginOK()
            try expectStatus(200, await fixture.refresh(first["refreshToken"]?.stringValue ?? ""))
            let reused = try await fixture.refresh(first["refreshToken"]?.stringValue ?? "")
            #expect(reused.status == 401)
            #expect(reused.code == "refresh_token_revoked")

            // Logout.
            let second = try await fixture.loginOK()
            try expectStatus(200, await fixture.send("POST", "/api/auth/acme/session/logout", json: [:],
                                                     headers: [("Authorization", "Bearer \(second.string("accessToken"))")]))
            #expect(try await fixture.refresh(second.string("refreshToken")).code == "refresh_token_revoked")

            // Time: the access token first, then the session's absolute lifetime.
            let third = try await fixture.loginOK()
            clock.advance(by: 901)
            let staleAccess = try await fixture.me(third.string("accessToken"))
            #expect(staleAccess.status == 401)
            #expect(staleAccess.code == "token_expired")
            clock.advance(by: 2700)
            let expired = try await fixture.refresh(third.string("refreshToken"))
            #expect(expired.status == 401)
            #expect(expired.code == "refresh_token_expired")
            #expect(expired.json["details"]?["reason"] == "lifetime")
        }
    }

    @Test("refresh answers account_disabled (403) and account_deleted (401) for the account's state", arguments: Backend.allCases)
    func refreshReportsAccountState(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK()
            let id = login.string("userId")
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(id)", json: ["status": "disabled"]))
            let disabled = try await fixture.refresh(login.string("refreshToken"))
            #expect(disabled.status == 403)
            #expect(disabled.code == "account_disabled")
            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)"))
            let deleted = try await fixture.refresh(login.string("refreshToken"))
            #expect(deleted.status == 401)
            #expect(deleted.code == "account_deleted")
        }
    }

    // MARK: - refreshIdleTTL

    @Test("a session unused past refreshIdleTTL ends (refresh_token_expired, reason idle); each refresh moves the deadline",
          arguments: Backend.allCases)
    func idleSessionEnds(backend: Backend) async throws {
        let clock = TestClock(Date())
        try await NativeLoginFixture.with(backend: backend, realmFields: ["accessTokenTTL": 300, "refreshTokenTTL": 86_400,
                                                                          "refreshIdleTTL": 600],
                                          clock: clock) { fixture in
            let login = try await fixture.loginOK()
            #expect(login["expiresIn"] == 300)
            #expect(login["refreshExpiresIn"] == 86_400)
            var token = login.string("refreshToken")
            for _ in 0..<3 {
                clock.advance(by: 590)
                let refreshed = try await fixture.refresh(token)
                try expectStatus(200, refreshed)
                token = refreshed.string("refreshToken")
            }
            let sessions = try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(login.string("userId"))/sessions")
            let session = try #require(sessions.items.first)
            #expect(session["idleExpiresAt"] == .number(Double(Int64(clock.now.timeIntervalSince1970) + 600)))

            clock.advance(by: 601)
            let idle = try await fixture.refresh(token)
            #expect(idle.status == 401)
            #expect(idle.code == "refresh_token_expired")
            #expect(idle.json["details"]?["reason"] == "idle")
            // Ended, not revoked: presenting it again is the same answer, not reuse.
            #expect(try await fixture.refresh(token).code == "refresh_token_expired")
        }
    }

    @Test("a client's refreshIdleTTL overrides the realm's; /token answers an idle session invalid_grant")
    func clientIdleOverrideAndTokenEndpoint() async throws {
        let clock = TestClock(Date())
        try await NativeLoginFixture.with(realmFields: ["refreshIdleTTL": 7200], clock: clock) { fixture in
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                       json: ["refreshIdleTTL": 120]))
            let login = try await fixture.loginOK()
            // Shorter than the realm's 900 s access lifetime: the access token never outlives the idle deadline.
            #expect(login["expiresIn"] == 120)
            clock.advance(by: 121)
            #expect(try await fixture.refresh(login.string("refreshToken")).code == "refresh_token_expired")

            // Clearing the override falls back to the realm's two hours.
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                       json: ["refreshIdleTTL": .null]))
            let relaxed = try await fixture.loginOK()
            clock.advance(by: 3600)
            try expectStatus(200, await fixture.refresh(relaxed.string("refreshToken")))

            // The OAuth token endpoint keeps RFC 6749 codes for the same condition.
            let other = try await fixture.loginOK()
            clock.advance(by: 7201)
            let viaToken = try await fixture.send("POST", "/api/oauth/acme/token", json: [
                "grant_type": "refresh_token", "refresh_token": .string(other.string("refreshToken")), "client_id": "ios-app"])
            #expect(viaToken.status == 400)
            #expect(viaToken.json["error"] == "invalid_grant")
        }
    }

    @Test("admin API bounds refreshIdleTTL: 60 s, and the access lifetime, up to the refresh lifetime; null clears; realm and client")
    func idleTTLValidation() async throws {
        try await NativeLoginFixture.with(realmFields: ["refreshTokenTTL": 3600]) { fixture in
            let realm = "/api/admin/realms/acme"
            let tooShort = try await fixture.admin("PATCH", realm, json: ["refreshIdleTTL": 59])
            #expect(tooShort.status == 400)
            #expect(tooShort.fieldProblems["refreshIdleTTL"] != nil)
            let tooLong = try await fixture.admin("PATCH", realm, json: ["refreshIdleTTL": 3601])
            #expect(tooLong.status == 400)
            #expect(tooLong.fieldProblems["refreshIdleTTL"] == "must not be longer than refreshTokenTTL")
            #expect(try await fixture.admin("PATCH", realm, json: ["refreshIdleTTL": "600"]).status == 400)
            let belowAccess = try await fixture.admin("PATCH", realm, json: ["refreshIdleTTL": 600])
            #expect(belowAccess.fieldProblems["refreshIdleTTL"] == "must not be shorter than accessTokenTTL")
            #expect(try await fixture.admin("PATCH", realm, json: ["refreshIdleTTL": 600, "accessTokenTTL": 600]).status == 200)
            let set = try await fixture.admin("PATCH", realm, json: ["refreshIdleTTL": 3600])
            #expect(set.status == 200)
            #expect(set.json["refreshIdleTTL"] == 3600)
            // Shortening the lifetime below the idle timeout is refused too.
            #expect(try await fixture.admin("PATCH", realm, json: ["refreshTokenTTL": 1800]).fieldProblems["refreshIdleTTL"] != nil)
            let cleared = try await fixture.admin("PATCH", realm, json: ["refreshIdleTTL": .null])
            #expect(cleared.status == 200)
            #expect(cleared.json["refreshIdleTTL"] == .null)

            let client = "\(realm)/clients/ios-app"
            #expect(try await fixture.admin("PATCH", client, json: ["refreshIdleTTL": 30]).fieldProblems["refreshIdleTTL"] != nil)
            let overLifetime = try await fixture.admin("PATCH", client, json: ["refreshTokenTTL": 600, "refreshIdleTTL": 900])
            #expect(overLifetime.fieldProblems["refreshIdleTTL"] == "must not be longer than refreshTokenTTL")
            let underAccess = try await fixture.admin("PATCH", client, json: ["accessTokenTTL": 600, "refreshIdleTTL": 300])
            #expect(underAccess.fieldProblems["refreshIdleTTL"] == "must not be shorter than accessTokenTTL")
            let ok = try await fixture.admin("PATCH", client, json: ["refreshIdleTTL": 300])
            #expect(ok.status == 200)
            #expect(ok.json["refreshIdleTTL"] == 300)
            #expect(try await fixture.admin("GET", client).json["refreshIdleTTL"] == 300)
        }
    }
}

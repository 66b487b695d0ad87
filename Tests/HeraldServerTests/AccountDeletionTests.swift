import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// `DELETE /api/auth/{realm}/me`: the owner deletes the account from the app, against the real
/// server on loopback and a fake Apple that checks each client secret. It deletes as the admin
/// delete does, queues the Apple revocation durably, ends every session, records
/// `account.deleted_by_user`, and answers a retry the same.
@Suite("Account deletion by its owner (DELETE /me)")
struct AccountDeletionTests {
    static func deleteMe(_ fixture: NativeLoginFixture, _ accessToken: String?) async throws -> TestHTTPClient.Response {
        try await fixture.send("DELETE", "/api/auth/acme/me",
                               headers: accessToken.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    static func ownerEvents(_ fixture: NativeLoginFixture) async throws -> [JSONValue] {
        let events = try await fixture.admin("GET", "/api/admin/realms/acme/events?type=account.deleted_by_user")
        try expectStatus(200, events)
        return events.json["items"]?.arrayValue ?? []
    }

    static func expectDeleted(_ response: TestHTTPClient.Response, appleTokenRevocation: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == 200, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.json == ["deleted": true, "appleTokenRevocation": .string(appleTokenRevocation)],
                sourceLocation: sourceLocation)
        #expect(response.header("Cache-Control") == "no-store", sourceLocation: sourceLocation)
    }

    @Test("the owner's delete revokes the Apple token at Apple, ends every session, records the event; a retry answers the same",
          arguments: Backend.allCases)
    func ownerDeletes(backend: Backend) async throws {
        try await AppleTokenRevocationTests.with(backend: backend) { fixture, apple in
            apple.issue(code: "c-del-1", refreshToken: "apple-refresh-del-1")
            let first = try await fixture.loginOK(extra: ["authorizationCode": "c-del-1"])
            let second = try await fixture.loginOK()
            let id = try #require(first["userId"]?.stringValue)
            #expect(second["userId"]?.stringValue == id)
            let access = try #require(first["accessToken"]?.stringValue)
            let refreshTokens = [first, second].compactMap { $0["refreshToken"]?.stringValue }
            try #require(refreshTokens.count == 2)
            try await waitUntil("the refresh token is stored") {
                try await AppleTokenRevocationTests.storedTokens(fixture).count == 1
            }

            Self.expectDeleted(try await Self.deleteMe(fixture, access), appleTokenRevocation: "queued")

            try await waitUntil("Apple was asked to revoke") { apple.calls.contains { $0.path == "/auth/revoke" } }
            let revoke = try #require(apple.calls.first { $0.path == "/auth/revoke" })
            #expect(revoke.secretValid)
            #expect(revoke.form["token"] == "apple-refresh-del-1")
            #expect(revoke.form["client_id"] == AppleTokenMinter.defaultAudience)
            try await waitUntil("the revocation left the queue") { try await AppleTokenRevocationTests.queued(fixture).isEmpty }
            #expect(try await AppleTokenRevocationTests.storedTokens(fixture).isEmpty)

            // Every session ended: the access token reads nothing, neither refresh token works.
            #expect(try await fixture.me(access).code == "account_deleted")
            for token in refreshTokens {
                let refreshed = try await fixture.refresh(token)
                #expect(refreshed.status == 401 && refreshed.code == "account_deleted", "\(refreshed.text)")
            }
            // Deleted as the admin delete does: email freed, identities unlinked.
            let account = try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(id)")
            #expect(account.json["status"] == "deleted")
            #expect(account.json["email"]?.stringValue?.hasSuffix("@deleted.invalid") == true)
            #expect(account.json["identities"]?.arrayValue?.isEmpty == true)

            let events = try await Self.ownerEvents(fixture)
            try #require(events.count == 1)
            #expect(events[0]["accountId"]?.stringValue == id)
            #expect(events[0]["clientId"] == "ios-app")
            #expect(events[0]["sessionId"]?.stringValue?.isEmpty == false)
            #expect(events[0]["clientIp"] == "127.0.0.1")
            #expect(events[0]["reason"] == "queued")
            #expect(events[0]["actor"] == .null)
            let audit = try await fixture.admin("GET", "/api/admin/audit")
            #expect(audit.json["items"]?.arrayValue?.contains {
                $0["action"] == "account.delete" && $0["actor"] == "account-owner"
            } == true, "\(audit.text)")

            // The retry (its first answer lost): the same answer, nothing new done or recorded.
            Self.expectDeleted(try await Self.deleteMe(fixture, access), appleTokenRevocation: "queued")
            #expect(try await Self.ownerEvents(fixture).count == 1)
            #expect(try await AppleTokenRevocationTests.queued(fixture).isEmpty)
            #expect(apple.calls.filter { $0.path == "/auth/revoke" }.count == 1)
        }
    }

    @Test("a code still waiting on Apple when the account is deleted: its token is revoked as soon as the exchange returns it")
    func pendingExchangeIsRevoked() async throws {
        try await AppleTokenRevocationTests.with { fixture, apple in
            let database = fixture.herald.application.services.database
            apple.issue(code: "c-del-pending", refreshToken: "apple-refresh-pending")
            apple.holdTokenRequests()
            let login = try await fixture.loginOK(extra: ["authorizationCode": "c-del-pending"])
            try await waitUntil("the exchange waits on Apple") { apple.heldTokenRequests.now == 1 }

            let access = try #require(login["accessToken"]?.stringValue)
            Self.expectDeleted(try await Self.deleteMe(fixture, access), appleTokenRevocation: "queued")
            apple.releaseTokenRequests()

            try await waitUntil("Apple was asked to revoke") { apple.calls.contains { $0.path == "/auth/revoke" } }
            #expect(apple.calls.first { $0.path == "/auth/revoke" }?.form["token"] == "apple-refresh-pending")
            try await waitUntil("the revocation left the queue") { try await AppleTokenRevocationTests.queued(fixture).isEmpty }
            #expect(try await AppleTokenRevocationTests.storedTokens(database).isEmpty, "the token was never kept")
            #expect(try await AppleTokenRevocationTests.exchanges(database).isEmpty)
        }
    }

    @Test("not_stored without an authorizationCode, not_configured without a .p8 key; a retry answers what was recorded")
    func outcomesWithoutAToken() async throws {
        try await AppleTokenRevocationTests.with { fixture, apple in
            let login = try await fixture.loginOK()
            let access = try #require(login["accessToken"]?.stringValue)
            Self.expectDeleted(try await Self.deleteMe(fixture, access), appleTokenRevocation: "not_stored")
            Self.expectDeleted(try await Self.deleteMe(fixture, access), appleTokenRevocation: "not_stored")

            // Deleted by an admin first: the owner's token answers what the admin's delete recorded.
            let another = try await fixture.loginOK(subject: "apple.other")
            let id = try #require(another["userId"]?.stringValue)
            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)"))
            let adminEvent = try await fixture.admin("GET", "/api/admin/realms/acme/events?type=account.deleted")
            #expect(adminEvent.json["items"]?.arrayValue?.first?["reason"] == "not_stored")
            Self.expectDeleted(try await Self.deleteMe(fixture, another["accessToken"]?.stringValue),
                               appleTokenRevocation: "not_stored")
            #expect(apple.calls.isEmpty)
        }
        // The fixture's realm has no Team ID, Key ID or key: Apple cannot be called.
        try await NativeLoginFixture.with { fixture in
            let access = try #require(try await fixture.loginOK()["accessToken"]?.stringValue)
            Self.expectDeleted(try await Self.deleteMe(fixture, access), appleTokenRevocation: "not_configured")
            Self.expectDeleted(try await Self.deleteMe(fixture, access), appleTokenRevocation: "not_configured")
            #expect(try await Self.ownerEvents(fixture).map { $0["reason"] } == ["not_configured"])
        }
    }

    @Test("the session's sign-in must be at most 10 minutes old, refreshes keep its age; older answers 401 reauthentication_required and changes nothing")
    func recentSignInRequired() async throws {
        let clock = TestClock(Date())
        try await NativeLoginFixture.with(clock: clock) { fixture in
            let login = try await fixture.loginOK()
            let refreshToken = try #require(login["refreshToken"]?.stringValue)
            clock.advance(by: 601)
            // A refresh issues a new access token of the same session: the sign-in is as old as before.
            let refreshed = try await fixture.refresh(refreshToken)
            try expectStatus(200, refreshed)
            let access = try #require(refreshed.json["accessToken"]?.stringValue)
            let refused = try await Self.deleteMe(fixture, access)
            #expect(refused.status == 401)
            #expect(refused.code == "reauthentication_required")
            #expect(refused.json["details"]?["maxAgeSeconds"] == 600)
            #expect(refused.header("WWW-Authenticate") == #"Bearer error="insufficient_user_authentication", max_age=600"#)
            #expect(try await fixture.me(access).status == 200, "nothing changed")
            #expect(try await Self.ownerEvents(fixture).isEmpty)

            // Signing in again (a new session) allows it, up to exactly 600 s later.
            let fresh = try #require(try await fixture.loginOK()["accessToken"]?.stringValue)
            clock.advance(by: 600)
            Self.expectDeleted(try await Self.deleteMe(fixture, fresh), appleTokenRevocation: "not_configured")
        }
    }

    @Test("what is not a live first-party session's access token is refused as at GET /me")
    func refusedTokens() async throws {
        try await NativeLoginFixture.with { fixture in
            let login = try await fixture.loginOK()
            let access = try #require(login["accessToken"]?.stringValue)
            let missing = try await Self.deleteMe(fixture, nil)
            #expect(missing.status == 401 && missing.code == "unauthorized")
            let refresh = try await Self.deleteMe(fixture, login["refreshToken"]?.stringValue)
            #expect(refresh.status == 401 && refresh.code == "wrong_token_type")
            #expect(try await Self.deleteMe(fixture, "not-a-token").code == "unauthorized")
            let otherRealm = try await fixture.send("DELETE", "/api/auth/nowhere/me", headers: [("Authorization", "Bearer \(access)")])
            #expect(otherRealm.status == 404)
            try expectStatus(200, await fixture.send("POST", "/api/auth/acme/session/logout",
                                                     headers: [("Authorization", "Bearer \(access)")]))
            let loggedOut = try await Self.deleteMe(fixture, access)
            #expect(loggedOut.status == 401 && loggedOut.code == "token_revoked")
            #expect(try await Self.ownerEvents(fixture).isEmpty)
            let account = try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(login["userId"]?.stringValue ?? "-")")
            #expect(account.json["status"] == "active")
        }
    }

    @Test("a third-party token is refused with 403 insufficient_scope unless its scope, as the client may still be granted it, holds account:delete",
          arguments: Backend.allCases)
    func thirdPartyNeedsScope(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let accountID = try await fixture.account()
            let now = Int64(Date().timeIntervalSince1970)
            func token(scope: String) async throws -> String {
                let code = try await fixture.code(accountID: accountID, authTime: now, ["scope": scope])
                let response = try await fixture.exchange(code)
                try expectStatus(200, response)
                return try #require(response.json["access_token"]?.stringValue)
            }
            func deleteMe(_ token: String) async throws -> TestHTTPClient.Response {
                try await herald.request("DELETE", "/api/auth/acme/me", headers: [("Authorization", "Bearer \(token)")])
            }
            func allow(_ scopes: [JSONValue]) async throws {
                try expectStatus(200, await herald.admin("PATCH", "/api/admin/realms/acme/clients/\(OAuthFixture.publicClient)",
                                                         json: ["allowedScopes": .array(scopes)]))
            }
            let plain = try await token(scope: "openid email profile")
            let refused = try await deleteMe(plain)
            #expect(refused.status == 403)
            #expect(refused.code == "insufficient_scope")
            #expect(refused.header("WWW-Authenticate") == #"Bearer error="insufficient_scope", scope="account:delete""#)

            try await allow(["openid", "profile", "email", "account:delete"])
            let granted = try await token(scope: "openid account:delete")
            // The client may no longer be granted it: the token's scope is capped.
            try await allow(["openid", "profile", "email"])
            #expect(try await deleteMe(granted).code == "insufficient_scope")
            let unchanged = try #require(try await herald.accounts.account(realmID: "acme", id: accountID))
            #expect(unchanged.status == .active)

            try await allow(["openid", "profile", "email", "account:delete"])
            let deleted = try await deleteMe(granted)
            #expect(deleted.status == 200, "\(deleted.text)")
            #expect(deleted.json == ["deleted": true, "appleTokenRevocation": "not_configured"])
            #expect(try await herald.accounts.account(realmID: "acme", id: accountID)?.status == .deleted)
            // The token without the scope stays refused, deleted account or not.
            #expect(try await deleteMe(plain).code == "insufficient_scope")
            let events = try await herald.admin("GET", "/api/admin/realms/acme/events?type=account.deleted_by_user")
            #expect(events.json["items"]?.arrayValue?.map { $0["clientId"] } == [.string(OAuthFixture.publicClient)])
        }
    }
}

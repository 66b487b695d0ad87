import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Testing
@testable import HeraldServer

@Suite("Apple native login, branch A")
struct NativeLoginTests {
    @Test("a first login creates the account with email and name; a later login returns the same user, not new", arguments: Backend.allCases)
    func firstLoginCreatesThenSecondFindsAccount(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let nonce = fixture.freshNonce()
            let first = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce,
                                          extra: ["fullName": ["givenName": "Ada", "familyName": "Lovelace"],
                                                  "authorizationCode": "ignored"])
            #expect(first.status == 200)
            #expect(first.header("Cache-Control") == "no-store")
            #expect(first.json["message"] == "Login successful")
            #expect(first.json["tokenType"] == "Bearer")
            #expect(first.json["isNewUser"] == true)
            #expect(first.json["expiresIn"] == 900)
            #expect(first.json["refreshExpiresIn"] == 2_592_000)
            let userID = first.string("userId")
            #expect(!userID.isEmpty)
            #expect(first.string("refreshToken").count >= 43)

            // Apple sends no email or name after the first authorization.
            let again = try await fixture.loginOK(email: nil)
            #expect(again["userId"]?.stringValue == userID)
            #expect(again["isNewUser"] == false)

            let me = try await fixture.me(again["accessToken"]?.stringValue)
            #expect(me.status == 200)
            #expect(me.header("Cache-Control") == "no-store")
            #expect(me.json["id"]?.stringValue == userID)
            #expect(me.json["email"] == "someone@example.com")
            #expect(me.json["emailVerified"] == true)
            #expect(me.json["isPrivateEmail"] == false)
            #expect(me.json["status"] == "active")
            #expect(me.json["name"]?["givenName"] == "Ada")
            #expect(me.json["name"]?["familyName"] == "Lovelace")
            #expect(me.json["identities"]?.arrayValue?.count == 1)
            #expect(me.json["identities"]?.arrayValue?.first?["provider"] == "apple")
        }
    }

    @Test("no email gives an unverified placeholder; a later login with a free real email replaces it and fills the name",
          arguments: Backend.allCases)
    func placeholderEmailIsReplacedLater(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let first = try await fixture.loginOK(subject: "sub.placeholder.1", email: nil)
            #expect(first["isNewUser"] == true)
            var me = try await fixture.me(first["accessToken"]?.stringValue).json
            #expect(me["email"] == "sub.placeholder.1@apple.placeholder")
            #expect(me["emailVerified"] == false)
            #expect(me["name"]?["displayName"] == .null)

            let later = try await fixture.loginOK(subject: "sub.placeholder.1", email: "real@example.com",
                                            extra: ["fullName": "Grace Hopper"])
            #expect(later["userId"] == first["userId"])
            me = try await fixture.me(later["accessToken"]?.stringValue).json
            #expect(me["email"] == "real@example.com")
            #expect(me["emailVerified"] == true)
            #expect(me["name"]?["displayName"] == "Grace Hopper")

            // Never overwrites: a third login with another name and email changes nothing.
            let third = try await fixture.loginOK(subject: "sub.placeholder.1", email: "other@example.com",
                                            extra: ["fullName": "Someone Else"])
            me = try await fixture.me(third["accessToken"]?.stringValue).json
            #expect(me["email"] == "real@example.com")
            #expect(me["name"]?["displayName"] == "Grace Hopper")
        }
    }

    @Test("a private-relay address is stored as a real email flagged isPrivateEmail", arguments: Backend.allCases)
    func privateRelayEmail(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK(subject: "sub.relay", email: "abc123@privaterelay.appleid.com")
            let me = try await fixture.me(login["accessToken"]?.stringValue).json
            #expect(me["email"] == "abc123@privaterelay.appleid.com")
            #expect(me["isPrivateEmail"] == true)
        }
    }

    @Test("a verified Apple email links to an existing verified account; with emailLinking never it does not", arguments: Backend.allCases)
    func verifiedEmailLinking(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let existing = try await fixture.herald.accounts.create(
                realmID: "acme", NewAccount(email: "linked@example.com", emailVerified: true))
            let login = try await fixture.loginOK(subject: "sub.link.1", email: "Linked@Example.com")
            #expect(login["userId"]?.stringValue == existing.id)
            #expect(login["isNewUser"] == false)

            // An unverified owner is never linked: the newcomer gets a placeholder.
            let unverified = try await fixture.herald.accounts.create(
                realmID: "acme", NewAccount(email: "unverified@example.com", emailVerified: false))
            let other = try await fixture.loginOK(subject: "sub.link.2", email: "unverified@example.com")
            #expect(other["userId"]?.stringValue != unverified.id)
            #expect(other["isNewUser"] == true)
            #expect(try await fixture.me(other["accessToken"]?.stringValue).json["email"] == "sub.link.2@apple.placeholder")

            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme", json: ["emailLinking": "never"]))
            let never = try await fixture.loginOK(subject: "sub.link.3", email: "linked@example.com")
            #expect(never["userId"]?.stringValue != existing.id)
            #expect(never["isNewUser"] == true)
            let identities = try await fixture.herald.accounts.identities(realmID: "acme",
                                                                          accountID: never["userId"]?.stringValue ?? "")
            #expect(identities.first?.email == "linked@example.com")
        }
    }

    @Test("registration disabled answers 409 registration_disabled for a new user but lets known users in", arguments: Backend.allCases)
    func registrationDisabled(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let known = try await fixture.loginOK(subject: "sub.known")
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme",
                                                       json: ["registrationEnabled": false]))
            let nonce = fixture.freshNonce()
            let refused = try await fixture.login(token: fixture.token(subject: "sub.new", nonce: nonce, email: "new@example.com"),
                                            nonce: nonce)
            #expect(refused.status == 409)
            #expect(refused.code == "registration_disabled")
            #expect(try await fixture.loginOK(subject: "sub.known")["userId"] == known["userId"])
        }
    }

    @Test("a disabled account answers 403 account_disabled; a deleted one never matches again", arguments: Backend.allCases)
    func disabledAndDeletedAccounts(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let first = try await fixture.loginOK(subject: "sub.status")
            let id = first["userId"]?.stringValue ?? ""
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(id)",
                                                       json: ["status": "disabled"]))
            let nonce = fixture.freshNonce()
            let refused = try await fixture.login(token: fixture.token(subject: "sub.status", nonce: nonce), nonce: nonce)
            #expect(refused.status == 403)
            #expect(refused.code == "account_disabled")

            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)"))
            let fresh = try await fixture.loginOK(subject: "sub.status")
            #expect(fresh["userId"]?.stringValue != id)
            #expect(fresh["isNewUser"] == true)
        }
    }

    @Test("twenty concurrent first logins of one sub create exactly one account", arguments: Backend.allCases)
    func concurrentFirstLoginsMakeOneAccount(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let requests = (0..<20).map { _ -> (String, String) in
                let nonce = fixture.freshNonce()
                return (fixture.token(subject: "sub.race", nonce: nonce, email: "race@example.com"), nonce)
            }
            let results = await concurrently(20) { index in
                try fixture.loginBlocking(token: requests[index].0, nonce: requests[index].1)
            }
            let responses = try results.map { try $0.get() }
            #expect(responses.allSatisfy { $0.status == 200 }, "\(responses.map(\.status))")
            #expect(Set(responses.map { $0.string("userId") }).count == 1)
            #expect(responses.filter { $0.json["isNewUser"] == true }.count == 1)
            let page = try await fixture.herald.accounts.list(realmID: "acme")
            #expect(page.items.count == 1)
            let identities = try await fixture.herald.application.services.database.read { db in
                try db.query("SELECT account_id FROM identities").map { try $0.string("account_id") }
            }
            #expect(identities == [responses[0].string("userId")], "one identity, on the one account")
        }
    }

    @Test("the identity token's fullName may be a string or an object; bad shapes are 400 naming the field", arguments: Backend.allCases)
    func fullNameShapes(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let nonce = fixture.freshNonce()
            let bad = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce, extra: ["fullName": 42])
            #expect(bad.status == 400)
            #expect(bad.fieldProblems["fullName"] != nil)
            let ok = try await fixture.loginOK(subject: "sub.names", extra: [
                "fullName": ["givenName": "John", "middleName": "Q", "familyName": "Public", "nickname": "JQ"],
            ])
            let me = try await fixture.me(ok["accessToken"]?.stringValue).json
            #expect(me["name"]?["givenName"] == "John Q")
            #expect(me["name"]?["familyName"] == "Public")
        }
    }
}

import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// A notification payload as Apple signs it: `events` is a JSON string inside the claims.
private func payload(_ fixture: NativeLoginFixture, type: String, subject: String = AppleTokenMinter.defaultSubject,
                     jti: String = UUID().uuidString, eventsAsObject: Bool = false,
                     _ customize: (inout AppleTokenSpec) -> Void = { _ in }) -> String {
    fixture.minter.token { spec in
        let issued = (fixture.clock?.now ?? Date()).timeIntervalSince1970.rounded(.down)
        let event: JSONValue = ["type": .string(type), "sub": .string(subject), "event_time": .number(issued * 1000)]
        spec.claims = [
            "iss": "https://appleid.apple.com", "aud": "com.example.herald.web", "iat": .number(issued),
            "jti": .string(jti),
            "events": eventsAsObject ? event : .string(String(decoding: try! JSONEncoder().encode(event), as: UTF8.self)),
        ]
        customize(&spec)
    }
}

/// POSTs a payload form-encoded, as Apple does.
private func notify(_ fixture: NativeLoginFixture, _ payload: String, realm: String = "acme") async throws
    -> TestHTTPClient.Response {
    try await fixture.herald.request("POST", "/api/oauth/\(realm)/apple/notifications",
                                     headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                     body: Array("payload=\(RedirectURI.encode(payload))".utf8))
}

private func account(_ fixture: NativeLoginFixture, _ id: String) async throws -> [String: JSONValue] {
    try await fixture.admin("GET", "/api/admin/realms/acme/accounts/\(id)").json
}

/// Stores an Apple refresh token row for the account as the vault keeps one (the sealed bytes
/// are opaque here: nothing in these tests opens them).
private func storeAppleToken(_ fixture: NativeLoginFixture, accountID: String, clientID: String) async throws {
    try await fixture.herald.application.services.database.write { db in
        try db.execute("""
            INSERT INTO apple_refresh_tokens (realm_id, account_id, client_id, sealed_token, stored_at)
            VALUES ('acme', ?, ?, ?, 1)
            """, .text(accountID), .text(clientID), .blob(Array("sealed-\(accountID)".utf8)))
    }
}

/// The accounts that have stored Apple refresh tokens, one entry per row, and the number of
/// revocations queued.
private func appleTokens(_ fixture: NativeLoginFixture) async throws -> (accounts: [String], queued: Int) {
    try await fixture.herald.application.services.database.read { db in
        let accounts = try db.query("SELECT account_id FROM apple_refresh_tokens ORDER BY account_id, client_id")
            .map { try $0.string("account_id") }
        let queued = try db.query("SELECT id FROM apple_token_revocations").count
        return (accounts, queued)
    }
}

@Suite("Apple server-to-server notifications")
struct AppleNotificationTests {
    @Test("consent-revoked unlinks the Apple identity and revokes the sessions, once; a retry changes nothing",
          arguments: Backend.allCases)
    func consentRevoked(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK()
            let id = try #require(login["userId"]?.stringValue)
            let access = try #require(login["accessToken"]?.stringValue)
            let event = payload(fixture, type: "consent-revoked", jti: "jti-consent")
            let first = try await notify(fixture, event)
            #expect(first.status == 200, "\(first.text)")
            #expect(first.json["outcome"] == "applied")
            #expect(first.json["type"] == "consent-revoked")
            #expect(try await fixture.me(access).code == "token_revoked")
            let detail = try await account(fixture, id)
            #expect(detail["identities"]?.arrayValue?.isEmpty == true, "\(detail)")
            #expect(detail["status"] == "active")

            // Apple retries: acknowledged, and nothing happens twice (no second audit entry).
            let auditBefore = try await fixture.admin("GET", "/api/admin/audit?realm=acme").json["items"]?.arrayValue?.count
            let again = try await notify(fixture, event)
            #expect(again.status == 200)
            #expect(again.json["outcome"] == "duplicate")
            let auditAfter = try await fixture.admin("GET", "/api/admin/audit?realm=acme").json["items"]?.arrayValue?.count
            #expect(auditBefore == auditAfter)
            let entries = try await fixture.admin("GET", "/api/admin/audit?realm=acme").text
            #expect(entries.contains("account.unlink") && entries.contains("\"apple\""))
        }
    }

    @Test("account-delete deletes the account as the admin delete does; JSON bodies and object events work too",
          arguments: Backend.allCases)
    func accountDelete(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK(email: "leaving@example.com")
            let id = try #require(login["userId"]?.stringValue)
            let refresh = try #require(login["refreshToken"]?.stringValue)
            let event = payload(fixture, type: "account-delete", eventsAsObject: true)
            let response = try await fixture.send("POST", "/api/oauth/acme/apple/notifications",
                                                  json: ["payload": .string(event)])
            #expect(response.status == 200, "\(response.text)")
            #expect(response.json["outcome"] == "applied")
            let detail = try await account(fixture, id)
            #expect(detail["status"] == "deleted")
            #expect(detail["email"]?.stringValue?.contains("leaving") == false)
            #expect(try await fixture.refresh(refresh).status == 401)
            let audit = try await fixture.admin("GET", "/api/admin/audit?realm=acme").text
            #expect(audit.contains("account.delete"))
            let again = try await fixture.send("POST", "/api/oauth/acme/apple/notifications", json: ["payload": .string(event)])
            #expect(again.status == 200 && again.json["outcome"] == "duplicate")
        }
    }

    @Test("account-deleted, the spelling Apple's documentation now uses, deletes the account as account-delete does")
    func accountDeletedSpelling() async throws {
        try await NativeLoginFixture.with { fixture in
            let login = try await fixture.loginOK(email: "leaving.too@example.com")
            let id = try #require(login["userId"]?.stringValue)
            let response = try await fixture.send("POST", "/api/oauth/acme/apple/notifications",
                                                  json: ["payload": .string(payload(fixture, type: "account-deleted"))])
            #expect(response.status == 200, "\(response.text)")
            #expect(response.json["outcome"] == "applied")
            #expect(try await account(fixture, id)["status"] == "deleted")
            #expect(try await fixture.refresh(try #require(login["refreshToken"]?.stringValue)).status == 401)
        }
    }

    @Test("consent-revoked and account-delete delete the account's Apple refresh tokens without queuing a revocation",
          arguments: Backend.allCases)
    func appleTokensForgotten(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            func accountID(_ subject: String) async throws -> String {
                let login = try await fixture.loginOK(subject: subject, email: "\(subject)@example.com")
                return try #require(login["userId"]?.stringValue)
            }
            let revoking = try await accountID("001111.revoking.0001")
            let leaving = try await accountID("002222.leaving.0002")
            let staying = try await accountID("003333.staying.0003")
            for account in [revoking, leaving, staying] {
                try await storeAppleToken(fixture, accountID: account, clientID: "com.example.herald.web")
            }
            try await storeAppleToken(fixture, accountID: revoking, clientID: AppleTokenMinter.defaultAudience)
            try await storeAppleToken(fixture, accountID: leaving, clientID: AppleTokenMinter.defaultAudience)
            #expect(try await appleTokens(fixture).accounts.count == 5)

            let consent = try await notify(fixture, payload(fixture, type: "consent-revoked", subject: "001111.revoking.0001"))
            #expect(consent.status == 200 && consent.json["outcome"] == "applied", "\(consent.text)")
            #expect(try await appleTokens(fixture).accounts.sorted() == [leaving, leaving, staying].sorted())

            let delete = try await notify(fixture, payload(fixture, type: "account-delete", subject: "002222.leaving.0002"))
            #expect(delete.status == 200 && delete.json["outcome"] == "applied", "\(delete.text)")
            #expect(try await account(fixture, leaving)["status"] == "deleted")
            let after = try await appleTokens(fixture)
            #expect(after.accounts == [staying])
            #expect(after.queued == 0, "no revocation is queued: Apple has already revoked the tokens")
        }
    }

    @Test("email-disabled and email-enabled record the identity's relay state; a retried one changes nothing")
    func emailRelay() async throws {
        try await NativeLoginFixture.with { fixture in
            let id = try #require(try await fixture.loginOK()["userId"]?.stringValue)
            func relay() async throws -> JSONValue? {
                try await account(fixture, id)["identities"]?.arrayValue?.first?["emailRelayEnabled"]
            }
            #expect(try await relay() == .null)
            let disabled = payload(fixture, type: "email-disabled")
            #expect(try await notify(fixture, disabled).json["outcome"] == "applied")
            #expect(try await relay() == false)
            #expect(try await notify(fixture, payload(fixture, type: "email-enabled")).json["outcome"] == "applied")
            #expect(try await relay() == true)
            // Apple retries the older event: it is a duplicate and does not switch the relay off again.
            #expect(try await notify(fixture, disabled).json["outcome"] == "duplicate")
            #expect(try await relay() == true)
        }
    }

    @Test("an unknown subject or event type is acknowledged and changes nothing")
    func ignored() async throws {
        try await NativeLoginFixture.with { fixture in
            let login = try await fixture.loginOK()
            let access = try #require(login["accessToken"]?.stringValue)
            let stranger = try await notify(fixture, payload(fixture, type: "account-delete", subject: "000000.unknown.0000"))
            #expect(stranger.status == 200 && stranger.json["outcome"] == "ignored")
            let novel = try await notify(fixture, payload(fixture, type: "something-new"))
            #expect(novel.status == 200 && novel.json["outcome"] == "ignored" && novel.json["type"] == "other")
            let audit = try await fixture.admin("GET", "/api/admin/audit?realm=acme&action=apple.notification.ignored").json
            #expect(audit["items"]?.arrayValue?.count == 2, "\(audit)")
            #expect(try await fixture.me(access).status == 200)
        }
    }

    @Test("a payload failing verification is 400 invalid_notification with its reason and changes nothing")
    func rejections() async throws {
        try await NativeLoginFixture.with { fixture in
            let login = try await fixture.loginOK()
            let access = try #require(login["accessToken"]?.stringValue)
            let cases: [(String, String)] = [
                ("signature", payload(fixture, type: "account-delete") { $0.signingKey = fakeAppleKeys.rotated }),
                ("unknown_key", payload(fixture, type: "account-delete") { $0.kid = "not-apples" }),
                ("algorithm", payload(fixture, type: "account-delete") { $0.alg = "HS256" }),
                ("issuer", payload(fixture, type: "account-delete") { $0.claims["iss"] = "https://evil.example" }),
                ("audience", payload(fixture, type: "account-delete") { $0.claims["aud"] = "com.other.app" }),
                ("expired", payload(fixture, type: "account-delete") {
                    $0.claims["iat"] = .number(Date().timeIntervalSince1970.rounded(.down) - 8 * 86_400)
                }),
                ("not_yet_valid", payload(fixture, type: "account-delete") {
                    $0.claims["iat"] = .number(Date().timeIntervalSince1970.rounded(.down) + 3600)
                }),
                ("malformed", payload(fixture, type: "account-delete") { $0.claims["iat"] = .number(1e20) }),
                ("missing_event", payload(fixture, type: "account-delete") { $0.claims["events"] = "not json" }),
                ("missing_event", payload(fixture, type: "account-delete") { $0.claims["jti"] = nil }),
                ("malformed", "not.a.jws"),
            ]
            for (reason, body) in cases {
                let response = try await notify(fixture, body)
                #expect(response.status == 400, "\(reason): \(response.text)")
                #expect(response.code == "invalid_notification", "\(reason)")
                #expect(response.json["details"]?["reason"]?.stringValue == reason, "\(reason): \(response.text)")
            }
            let empty = try await fixture.herald.request("POST", "/api/oauth/acme/apple/notifications",
                                                         headers: [("Content-Type", "application/x-www-form-urlencoded")])
            #expect(empty.status == 400 && empty.code == "bad_request")
            let text = try await fixture.herald.request("POST", "/api/oauth/acme/apple/notifications",
                                                        headers: [("Content-Type", "text/plain")], body: Array("x".utf8))
            #expect(text.status == 415)
            #expect(try await notify(fixture, payload(fixture, type: "account-delete"), realm: "nope").status == 404)
            #expect(try await fixture.me(access).status == 200)
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains("herald_apple_notifications_total{type=\"unverified\",outcome=\"rejected_signature\"} 1"))
        }
    }

    @Test("an expired notification is 400 expired and changes nothing; one expired by less than the leeway is applied")
    func expiredNotification() async throws {
        try await NativeLoginFixture.with { fixture in
            let login = try await fixture.loginOK()
            let id = try #require(login["userId"]?.stringValue)
            let access = try #require(login["accessToken"]?.stringValue)
            let now = Date().timeIntervalSince1970.rounded(.down)
            let expired = payload(fixture, type: "account-delete") {
                $0.claims["iat"] = .number(now - 2 * 86_400)
                $0.claims["exp"] = .number(now - 86_400)
            }
            let refused = try await notify(fixture, expired)
            #expect(refused.status == 400, "\(refused.text)")
            #expect(refused.code == "invalid_notification")
            #expect(refused.json["details"]?["reason"] == "expired")
            #expect(try await fixture.me(access).status == 200, "the sessions are still valid")
            #expect(try await account(fixture, id)["status"] == "active")

            // Half of the 60 s leeway (AppleIdentityVerifier.clockLeewaySeconds) past `exp`.
            let late = payload(fixture, type: "consent-revoked") {
                $0.claims["iat"] = .number(now - 86_400)
                $0.claims["exp"] = .number(now - 30)
            }
            let applied = try await notify(fixture, late)
            #expect(applied.status == 200, "\(applied.text)")
            #expect(applied.json["outcome"] == "applied")
            #expect(try await fixture.me(access).code == "token_revoked")
        }
    }

    @Test("Apple's JWKS unreachable → 503 apple_unavailable with Retry-After, so Apple retries; nothing changed")
    func appleUnavailable() async throws {
        try await NativeLoginFixture.with { fixture in
            fixture.apple.setBehaviour(.status(500))
            let response = try await notify(fixture, payload(fixture, type: "account-delete", subject: "any"))
            #expect(response.status == 503)
            #expect(response.code == "apple_unavailable")
            #expect(Int(response.header("Retry-After") ?? "") ?? 0 >= 1)
        }
    }
}

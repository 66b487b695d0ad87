import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// Native login keeps Apple's refresh token from the `authorizationCode`; deleting the account
/// revokes it at Apple — against a fake Apple that checks each freshly signed client secret.
@Suite("Apple token exchange and revocation")
struct AppleTokenRevocationTests {
    static func with(clock: TestClock? = nil, maintenance: MaintenanceLoop = MaintenanceLoop(),
                     _ body: (NativeLoginFixture, FakeAppleAPIServer) async throws -> Void) async throws {
        let apple = try FakeAppleAPIServer()
        do {
            try await NativeLoginFixture.with(clock: clock, configure: { $0.appleBaseURL = apple.baseURL },
                                              maintenance: maintenance) { fixture in
                try expectStatus(200, await fixture.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                    "enabled": true, "clientId": "com.example.herald.web",
                    "audiences": [.string(AppleTokenMinter.defaultAudience)],
                    "teamId": .string(apple.teamID), "keyId": .string(apple.keyID),
                    "privateKey": .string(apple.privateKeyPEM),
                ]))
                try await body(fixture, apple)
            }
        } catch {
            await apple.stop()
            throw error
        }
        await apple.stop()
    }

    static func storedTokens(_ fixture: NativeLoginFixture) async throws -> [[UInt8]] {
        try await fixture.herald.application.context.database.read { db in
            try db.query("SELECT sealed_token FROM apple_refresh_tokens").map { try $0.bytes("sealed_token") }
        }
    }

    static func queued(_ fixture: NativeLoginFixture) async throws -> [(attempts: Int64, next: Int64)] {
        try await fixture.herald.application.context.database.read { db in
            try db.query("SELECT attempts, next_attempt_at FROM apple_token_revocations").map {
                (try $0.int("attempts"), try $0.int("next_attempt_at"))
            }
        }
    }

    @Test("the login's code is exchanged with a fresh client secret, Apple's refresh token kept sealed, and revoked on delete")
    func exchangeAndRevoke() async throws {
        try await Self.with { fixture, apple in
            apple.issue(code: "c-apple-1", refreshToken: "apple-refresh-secret-1")
            let login = try await fixture.loginOK(extra: ["authorizationCode": "c-apple-1"])
            let id = try #require(login["userId"]?.stringValue)
            try await waitUntil("the refresh token is stored") { try await Self.storedTokens(fixture).count == 1 }
            let exchange = try #require(apple.calls.first { $0.path == "/auth/token" })
            #expect(exchange.secretValid)
            #expect(exchange.form["client_id"] == AppleTokenMinter.defaultAudience)
            #expect(exchange.form["code"] == "c-apple-1" && exchange.form["grant_type"] == "authorization_code")
            let sealed = try await Self.storedTokens(fixture)[0]
            #expect(!String(decoding: sealed, as: UTF8.self).contains("apple-refresh-secret-1"))

            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)", reason: "user asked"))
            try await waitUntil("Apple was asked to revoke") { apple.calls.contains { $0.path == "/auth/revoke" } }
            let revoke = try #require(apple.calls.first { $0.path == "/auth/revoke" })
            #expect(revoke.secretValid)
            #expect(revoke.form["token"] == "apple-refresh-secret-1")
            #expect(revoke.form["client_id"] == AppleTokenMinter.defaultAudience)
            #expect(revoke.form["token_type_hint"] == "refresh_token")
            try await waitUntil("the revocation left the queue") { try await Self.queued(fixture).isEmpty }
            #expect(try await Self.storedTokens(fixture).isEmpty)
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains("herald_apple_calls_total{operation=\"token_exchange\",outcome=\"success\"} 1"))
            #expect(metrics.contains("herald_apple_calls_total{operation=\"revoke\",outcome=\"success\"} 1"))
        }
    }

    @Test("a refused exchange does not fail the login; it is counted by Apple's error, recorded as an event, and nothing is stored")
    func failedExchange() async throws {
        try await Self.with { fixture, apple in
            // Apple knows no such code: 400 invalid_grant.
            let login = try await fixture.login(token: fixture.token(nonce: "n-unknown-code"), nonce: "n-unknown-code",
                                                extra: ["authorizationCode": "never-issued"])
            #expect(login.status == 200)
            try await waitUntil("the failure is counted") {
                try await fixture.send("GET", "/metrics").text
                    .contains("herald_apple_calls_total{operation=\"token_exchange\",outcome=\"invalid_grant\"} 1")
            }
            #expect(try await Self.storedTokens(fixture).isEmpty)
            try await waitUntil("the refusal is an event") {
                let events = try await fixture.admin("GET", "/api/admin/realms/acme/events?type=apple.code_exchange_refused")
                return events.json["items"]?.arrayValue?.first?["reason"] == "invalid_grant"
            }
        }
    }

    @Test("a failed revocation never blocks the delete and is retried by the maintenance loop with backoff")
    func revocationRetries() async throws {
        let clock = TestClock(Date())
        let pacer = MaintenancePacer()
        try await Self.with(clock: clock, maintenance: MaintenanceLoop(pause: pacer.pause)) { fixture, apple in
            try await waitUntil("the first maintenance round is done") { pacer.rounds == 1 }
            apple.issue(code: "c-apple-2", refreshToken: "apple-refresh-secret-2")
            let id = try #require(try await fixture.loginOK(extra: ["authorizationCode": "c-apple-2"])["userId"]?.stringValue)
            try await waitUntil("the refresh token is stored") { try await Self.storedTokens(fixture).count == 1 }

            apple.fail(with: 503)
            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)", reason: "gone"))
            try await waitUntil("the first attempt failed") { try await Self.queued(fixture).first?.attempts == 1 }
            let next = try #require(try await Self.queued(fixture).first?.next)
            #expect(next == clock.now.unixSeconds + 60)

            // Not due yet: a round changes nothing.
            pacer.endInterval()
            try await waitUntil("the second round is done") { pacer.rounds == 2 }
            #expect(try await Self.queued(fixture).first?.attempts == 1)

            apple.fail(with: nil)
            clock.advance(by: 61)
            pacer.endInterval()
            try await waitUntil("the third round is done") { pacer.rounds == 3 }
            #expect(try await Self.queued(fixture).isEmpty)
            #expect(apple.calls.filter { $0.path == "/auth/revoke" }.count == 2)
            #expect(apple.calls.last?.form["token"] == "apple-refresh-secret-2")
        }
    }
}

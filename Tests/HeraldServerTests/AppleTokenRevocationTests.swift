import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// Native login keeps Apple's refresh token from the `authorizationCode`; deleting the account
/// revokes it at Apple — against a fake Apple that checks each freshly signed client secret. Both
/// calls are queued durably and made by `AppleTokenWork`, so a restart loses neither.
@Suite("Apple token exchange and revocation")
struct AppleTokenRevocationTests {
    static func with(backend: Backend = .sqlite, clock: TestClock? = nil,
                     _ body: (NativeLoginFixture, FakeAppleAPIServer) async throws -> Void) async throws {
        let apple = try FakeAppleAPIServer()
        do {
            try await NativeLoginFixture.with(backend: backend, clock: clock,
                                              configure: { $0.appleBaseURL = apple.baseURL }) { fixture in
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
        try await storedTokens(fixture.herald.application.services.database)
    }

    static func storedTokens(_ database: any Database) async throws -> [[UInt8]] {
        try await database.read { db in
            try db.query("SELECT sealed_token FROM apple_refresh_tokens").map { try $0.bytes("sealed_token") }
        }
    }

    static func queued(_ fixture: NativeLoginFixture) async throws -> [(attempts: Int64, next: Int64)] {
        try await queued(fixture.herald.application.services.database)
    }

    static func queued(_ database: any Database) async throws -> [(attempts: Int64, next: Int64)] {
        try await database.read { db in
            try db.query("SELECT attempts, next_attempt_at FROM apple_token_revocations").map {
                (try $0.int("attempts"), try $0.int("next_attempt_at"))
            }
        }
    }

    /// The queued code exchanges: attempts, and the sealed code.
    static func exchanges(_ database: any Database) async throws -> [(attempts: Int64, sealed: [UInt8])] {
        try await database.read { db in
            try db.query("SELECT attempts, sealed_code FROM apple_code_exchanges").map {
                (try $0.int("attempts"), try $0.bytes("sealed_code"))
            }
        }
    }

    /// Shuts the fixture's application down and runs `body` against a new one on the same
    /// database and configuration (the master key file included), as a restarted node would be.
    /// Stops the fixture's application, runs `whileStopped` (e.g. Apple recovering, so the new
    /// start's first round does not race the test), and starts a new one on the same database.
    static func restarted(_ fixture: NativeLoginFixture, now: @escaping @Sendable () -> Date,
                          whileStopped: () -> Void = {},
                          _ body: (HeraldApplication) async throws -> Void) async throws {
        let configuration = fixture.herald.application.services.configuration
        await fixture.herald.application.shutdown()
        whileStopped()
        let application = try await HeraldApplication.open(configuration: configuration,
                                                            logger: Logger(level: .error, now: now, sink: { _ in }), now: now)
        do {
            try application.start()
            try await body(application)
        } catch {
            await application.shutdown()
            throw error
        }
        await application.shutdown()
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
            // A round is counted just after its write, which is what emptied the queue.
            try await waitUntil("the revocation was counted") {
                try await fixture.send("GET", "/metrics").text
                    .contains("herald_apple_calls_total{operation=\"revoke\",outcome=\"success\"} 1")
            }
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains("herald_apple_calls_total{operation=\"token_exchange\",outcome=\"success\"} 1"))
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
            // A refusal is not retried: the exchange left the queue.
            #expect(try await Self.exchanges(fixture.herald.application.services.database).isEmpty)
            try await waitUntil("the refusal is an event") {
                let events = try await fixture.admin("GET", "/api/admin/realms/acme/events?type=apple.code_exchange_refused")
                return events.json["items"]?.arrayValue?.first?["reason"] == "invalid_grant"
            }
        }
    }

    @Test("a failed revocation never blocks the delete and is retried with backoff")
    func revocationRetries() async throws {
        let clock = TestClock(Date())
        try await Self.with(clock: clock) { fixture, apple in
            let work = fixture.herald.application.services.appleTokenWork
            apple.issue(code: "c-apple-2", refreshToken: "apple-refresh-secret-2")
            let id = try #require(try await fixture.loginOK(extra: ["authorizationCode": "c-apple-2"])["userId"]?.stringValue)
            try await waitUntil("the refresh token is stored") { try await Self.storedTokens(fixture).count == 1 }

            apple.fail(with: 503)
            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)", reason: "gone"))
            try await waitUntil("the first attempt failed") { try await Self.queued(fixture).first?.attempts == 1 }
            let next = try #require(try await Self.queued(fixture).first?.next)
            #expect(next == clock.now.unixSeconds + 60)

            // Not due yet: a round changes nothing.
            let rounds = work.rounds
            work.wake()
            try await waitUntil("another round is done") { work.rounds > rounds }
            #expect(try await Self.queued(fixture).first?.attempts == 1)

            // Exactly the backoff: the fake Apple takes a client secret issued at most 60 s ahead of its clock.
            apple.fail(with: nil)
            clock.advance(by: 60)
            work.wake()
            try await waitUntil("the revocation left the queue") { try await Self.queued(fixture).isEmpty }
            #expect(apple.calls.filter { $0.path == "/auth/revoke" }.count == 2)
            #expect(apple.calls.last?.form["token"] == "apple-refresh-secret-2")
        }
    }

    @Test("a code Apple could not take within its five minutes is dropped and counted as abandoned, retried with backoff until then")
    func expiredCodeIsAbandoned() async throws {
        let clock = TestClock(Date())
        try await Self.with(clock: clock) { fixture, apple in
            let work = fixture.herald.application.services.appleTokenWork
            let database = fixture.herald.application.services.database
            apple.issue(code: "c-expiring", refreshToken: "apple-refresh-expiring")
            apple.fail(with: 503)
            try await fixture.loginOK(extra: ["authorizationCode": "c-expiring"])
            try await waitUntil("the first exchange failed") { try await Self.exchanges(database).first?.attempts == 1 }
            // 5 s later the second attempt is due, and fails too.
            clock.advance(by: 5)
            work.wake()
            try await waitUntil("the second exchange failed") { try await Self.exchanges(database).first?.attempts == 2 }

            clock.advance(by: 300)
            work.wake()
            try await waitUntil("the exchange is dropped") { try await Self.exchanges(database).isEmpty }
            #expect(try await Self.storedTokens(database).isEmpty)
            #expect(apple.calls.filter { $0.path == "/auth/token" }.count == 2, "no call once the code expired")
            // Each attempt is counted just after its write, which is what the waits above saw.
            try await waitUntil("the drop was counted") {
                try await fixture.send("GET", "/metrics").text
                    .contains("herald_apple_calls_total{operation=\"token_exchange\",outcome=\"abandoned\"} 1")
            }
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains("herald_apple_calls_total{operation=\"token_exchange\",outcome=\"http_error\"} 2"))
        }
    }

    @Test("a code queued while Apple fails is kept sealed and exchanged by the next start on the same database")
    func exchangeSurvivesRestart() async throws {
        let clock = TestClock(Date())
        try await Self.with(clock: clock) { fixture, apple in
            apple.issue(code: "c-restart", refreshToken: "apple-refresh-restart")
            apple.fail(with: 503)
            try await fixture.loginOK(extra: ["authorizationCode": "c-restart"])
            let database = fixture.herald.application.services.database
            try await waitUntil("the first exchange failed") { try await Self.exchanges(database).first?.attempts == 1 }
            let sealed = try #require(try await Self.exchanges(database).first?.sealed)
            #expect(!String(decoding: sealed, as: UTF8.self).contains("c-restart"))
            #expect(try await Self.storedTokens(database).isEmpty)

            // Due again by the time the next node starts (the clock moves only while no node runs,
            // so the first one cannot try again meanwhile): the new start picks it up at once.
            try await Self.restarted(fixture, now: clock.closure, whileStopped: {
                clock.advance(by: 10)
                apple.fail(with: nil)
            }) { application in
                let database = application.services.database
                try await waitUntil("the refresh token is stored") { try await Self.storedTokens(database).count == 1 }
                #expect(try await Self.exchanges(database).isEmpty)
            }
            let exchanges = apple.calls.filter { $0.path == "/auth/token" }
            #expect(exchanges.count == 2 && exchanges.allSatisfy { $0.form["code"] == "c-restart" })
        }
    }

    @Test("a revocation that failed before a restart is made by the next start on the same database")
    func revocationSurvivesRestart() async throws {
        let clock = TestClock(Date())
        try await Self.with(clock: clock) { fixture, apple in
            apple.issue(code: "c-apple-3", refreshToken: "apple-refresh-secret-3")
            let id = try #require(try await fixture.loginOK(extra: ["authorizationCode": "c-apple-3"])["userId"]?.stringValue)
            try await waitUntil("the refresh token is stored") { try await Self.storedTokens(fixture).count == 1 }
            apple.fail(with: 503)
            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(id)", reason: "gone"))
            try await waitUntil("the first attempt failed") { try await Self.queued(fixture).first?.attempts == 1 }

            // The backoff passes and Apple recovers while no node runs, so only the new start tries.
            try await Self.restarted(fixture, now: clock.closure, whileStopped: {
                clock.advance(by: 60)
                apple.fail(with: nil)
            }) { application in
                let database = application.services.database
                try await waitUntil("the revocation left the queue") { try await Self.queued(database).isEmpty }
            }
            let revocations = apple.calls.filter { $0.path == "/auth/revoke" }
            #expect(revocations.count == 2)
            #expect(revocations.last?.form["token"] == "apple-refresh-secret-3")
        }
    }

    @Test("shutdown cancels an exchange waiting on Apple and waits for it before closing the database; the code stays queued")
    func shutdownWaitsForAppleTokenWork() async throws {
        try await Self.with { fixture, apple in
            apple.issue(code: "c-held", refreshToken: "apple-refresh-held")
            apple.holdTokenRequests()
            // The login answers while its code's exchange waits on Apple.
            try await fixture.loginOK(extra: ["authorizationCode": "c-held"])
            try await waitUntil("the exchange waits on Apple") { apple.heldTokenRequests.now == 1 }

            let configuration = fixture.herald.application.services.configuration
            // Shutdown cancels the call (so it does not wait out Apple's 5 s connect timeout); how
            // fast is not asserted, since sanitizer builds slow everything several-fold. What
            // must hold is that it returns only once the work has stopped, leaving the code queued.
            await fixture.herald.application.shutdown()
            apple.releaseTokenRequests()

            // The code is there for the next start. Cut short by the shutdown it counts no attempt;
            // only a machine so slow that Apple's 5 s connect timeout came first (a loaded
            // sanitizer run) shows the one failed attempt instead.
            let database = try await HeraldApplication.openDatabase(configuration: configuration, now: { Date() })
            let exchanges = try await Self.exchanges(database)
            await database.close()
            #expect(exchanges.count == 1)
            #expect((exchanges.first?.attempts ?? 2) <= 1)
        }
    }
}

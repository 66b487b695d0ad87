import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Storage
import Testing
@testable import HeraldServer

/// `GET /api/admin/realms/:realm/overview` against the real server: sign-ins counted from real
/// logins, Apple's health, and warnings as words and as the gauge.
@Suite("Realm overview")
struct RealmOverviewTests {
    static func overview(_ fixture: NativeLoginFixture, _ query: String = "") async throws -> [String: JSONValue] {
        let response = try await fixture.admin("GET", "/api/admin/realms/acme/overview" + query)
        try expectStatus(200, response)
        return response.json
    }

    @Test("sign-ins made through the door show in the window's slots and sums, by reason, provider and door",
          arguments: Backend.allCases)
    func countsRealSignIns(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            try await fixture.loginOK(subject: "first")
            try await fixture.loginOK(subject: "first")
            let nonce = fixture.freshNonce()
            let refused = try await fixture.login(token: fixture.token(nonce: nonce) { $0.claims["aud"] = "com.other.app" },
                                                  nonce: nonce)
            try expectStatus(401, refused)
            // A made-up realm is not counted anywhere.
            _ = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce, realm: "nowhere")
            try await fixture.herald.application.services.loginCounts.share()

            let day = try await Self.overview(fixture)
            #expect(day["window"]?.stringValue == "24h")
            let totals = try #require(day["totals"])
            #expect(totals["attempts"]?.int64Value == 3)
            #expect(totals["success"]?.int64Value == 2)
            #expect(totals["newAccounts"]?.int64Value == 1)
            #expect(totals["rejected"]?.int64Value == 1)
            let slots = try #require(day["slots"]?.arrayValue)
            #expect(slots.count == 24)
            // In the current hour's slot, or the one before when an hour began during the test.
            let recent = slots.suffix(2)
            #expect(recent.reduce(0) { $0 + ($1["success"]?.int64Value ?? 0) } == 2
                    && recent.reduce(0) { $0 + ($1["rejected"]?.int64Value ?? 0) } == 1)
            let reasons = (day["byReason"]?.arrayValue ?? []).map {
                "\($0["outcome"]?.stringValue ?? "") \($0["reason"]?.stringValue ?? "") \($0["count"]?.int64Value ?? 0)"
            }
            #expect(reasons == ["rejected audience 1", "success created 1", "success existing 1"])
            let doors = try #require(day["byProviderDoor"]?.arrayValue)
            #expect(doors.count == 1 && doors.first?["provider"]?.stringValue == "apple"
                    && doors.first?["door"]?.stringValue == "native" && doors.first?["attempts"]?.int64Value == 3)
            let week = try await Self.overview(fixture, "?window=7d")
            #expect(week["slots"]?.arrayValue?.count == 7)
            #expect(week["totals"]?["attempts"]?.int64Value == 3)
            #expect(try await Self.rowCount(fixture.herald.application.services.database, realm: "nowhere") == 0)
        }
    }

    static func rowCount(_ database: any Database, realm: String) async throws -> Int64 {
        try await database.read { db in
            try db.queryOne("SELECT COUNT(*) AS n FROM login_counts WHERE realm_id = ?", .text(realm))?.int("n") ?? -1
        }
    }

    @Test("a bad window is a 400 naming it; an unknown realm is a 404; a viewer may read")
    func inputAndAccess() async throws {
        try await NativeLoginFixture.with { fixture in
            let bad = try await fixture.admin("GET", "/api/admin/realms/acme/overview?window=1y")
            try expectStatus(400, bad)
            #expect(bad.fieldProblems["window"] != nil)
            try expectStatus(404, await fixture.admin("GET", "/api/admin/realms/nowhere/overview"))
            let viewer = try await AdminAccessScopeTests.token(fixture.herald, "viewer", role: .viewer, scope: .realms(["acme"]))
            try expectStatus(200, await fixture.herald.admin("GET", "/api/admin/realms/acme/overview", token: viewer))
        }
    }

    @Test("Apple's health: keys held after a login, configuration flags, notifications and tokens from Apple's tables",
          arguments: Backend.allCases)
    func appleHealth(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            try await fixture.loginOK(subject: "first")
            let database = fixture.herald.application.services.database
            let now = Int64(Date().timeIntervalSince1970)
            // r1 is still being tried; r2 is past any maximum of attempts: given up.
            try await database.write { db in
                let account = try db.queryOne("SELECT id FROM accounts WHERE realm_id = 'acme'")?.string("id") ?? ""
                try db.execute("""
                    INSERT INTO apple_refresh_tokens (realm_id, account_id, client_id, sealed_token, stored_at)
                    VALUES ('acme', ?, 'ios-app', ?, ?)
                    """, .text(account), .blob([1, 2, 3]), .integer(now - 100))
                for (jti, type, at) in [("n1", "consent-revoked", now - 50), ("n2", "email-disabled", now - 40),
                                        ("n3", "consent-revoked", now - 30)] {
                    try db.execute("""
                        INSERT INTO apple_notifications (realm_id, jti, type, outcome, received_at) VALUES ('acme', ?, ?, 'applied', ?)
                        """, .text(jti), .text(type), .integer(at))
                }
                try db.execute("""
                    INSERT INTO apple_token_revocations (id, realm_id, client_id, sealed_token, attempts, next_attempt_at, queued_at)
                    VALUES ('r1', 'acme', 'ios-app', ?, 1, ?, ?), ('r2', 'acme', 'ios-app', ?, ?, ?, ?)
                    """, .blob([1]), .integer(now + 60), .integer(now), .blob([2]), .integer(1_000),
                    .integer(now + 60), .integer(now))
            }
            let apple = try #require(try await Self.overview(fixture)["apple"])
            #expect(apple["configured"]?.boolValue == true && apple["enabled"]?.boolValue == true)
            #expect(apple["keys"]?["keyIds"]?.arrayValue?.isEmpty == false)
            #expect(apple["keys"]?["lastSuccessAt"]?.int64Value != nil)
            #expect(apple["keys"]?["stale"]?.boolValue == false)
            #expect(apple["webFlow"]?["teamIdSet"]?.boolValue == false && apple["webFlow"]?["privateKeyStored"]?.boolValue == false)
            #expect(apple["notifications"]?["last"]?["type"]?.stringValue == "consent-revoked")
            #expect(apple["notifications"]?["byType"]?["consent-revoked"]?.int64Value == 2)
            #expect(apple["tokens"]?["refreshTokens"]?.int64Value == 1)
            #expect(apple["tokens"]?["pendingRevocations"]?.int64Value == 1)
            #expect(apple["tokens"]?["failedRevocations"]?.int64Value == 1)
            let warnings = try await Self.overview(fixture)["warnings"]?.arrayValue ?? []
            #expect(warnings.compactMap { $0["kind"]?.stringValue } == ["revocations_failed"])
        }
    }

    @Test("Apple refusing the client secret is a warning in words and the gauge; a later success clears both")
    func secretRejectionWarns() async throws {
        try await NativeLoginFixture.with { fixture in
            let services = fixture.herald.application.services
            await services.appleRefusals.record(.invalidClient, realmID: "acme", clientID: nil)
            let warnings = try await Self.overview(fixture)["warnings"]?.arrayValue ?? []
            let warning = try #require(warnings.first { $0["kind"]?.stringValue == "client_secret_rejected" })
            let message = try #require(warning["message"]?.stringValue)
            #expect(message.hasPrefix("Apple rejected the client secret at ") && message.contains("(invalid_client): check the Key ID"))
            let gauge = #"herald_apple_health_warning{realm="acme",kind="client_secret_rejected"}"#
            #expect(try await fixture.send("GET", "/metrics").text.contains(gauge + " 1"))
            #expect(services.appleHealthWarnings.active(realmID: "acme") == [.clientSecretRejected])
            #expect(try await Self.overview(fixture)["apple"]?["webFlow"]?["lastRefusal"]?["error"]?.stringValue
                    == "invalid_client")

            services.appleRefusals.recordSuccess(realmID: "acme")
            // The refusal and the success fall in the same second: the success is the newer news.
            let after = try await Self.overview(fixture)
            #expect(after["warnings"]?.arrayValue?.isEmpty == true)
            #expect(after["apple"]?["webFlow"]?["lastExchange"]?["ok"]?.boolValue == true)
            #expect(try await fixture.send("GET", "/metrics").text.contains(gauge + " 0"))
        }
    }

    @Test("the monitor sets the gauge for realms nobody opened, and drops realms that are gone")
    func monitorChecksEveryRealm() async throws {
        try await NativeLoginFixture.with { fixture in
            let services = fixture.herald.application.services
            let now = Int64(Date().timeIntervalSince1970)
            try await services.database.write { db in
                try db.execute("""
                    INSERT INTO apple_token_revocations (id, realm_id, client_id, sealed_token, attempts, next_attempt_at, queued_at)
                    VALUES ('r9', 'acme', 'ios-app', ?, 1000, ?, ?)
                    """, .blob([1]), .integer(now + 60), .integer(now))
            }
            services.appleHealthWarnings.set(.staleKeys, active: true, realmID: "gone")
            let monitor = AppleHealthMonitor(realms: services.realms, overviews: services.overviews,
                                             logger: services.logger, now: services.now)
            await monitor.checkAll()
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains(#"herald_apple_health_warning{realm="acme",kind="revocations_failed"} 1"#))
            #expect(metrics.contains(#"herald_apple_health_warning{realm="acme",kind="stale_keys"} 0"#))
            #expect(!metrics.contains(#"realm="gone""#))
        }
    }
}

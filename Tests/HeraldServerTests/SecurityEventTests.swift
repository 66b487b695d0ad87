import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Issue #16: security events per realm at `GET /api/admin/realms/{id}/events`, written with
/// what they record, paged, filtered by type, purged after the retention period.
@Suite("Security events")
struct SecurityEventTests {
    static func events(_ fixture: NativeLoginFixture, _ query: String = "") async throws -> TestHTTPClient.Response {
        try await fixture.admin("GET", "/api/admin/realms/acme/events" + query)
    }

    static func items(_ response: TestHTTPClient.Response) -> [[String: JSONValue]] {
        guard case .array(let items)? = response.json["items"] else { return [] }
        return items.compactMap { if case .object(let object) = $0 { object } else { nil } }
    }

    @Test("logins, failures, refresh-token reuse and account changes are recorded, never a token or email",
          arguments: Backend.allCases)
    func eventsAreRecorded(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let login = try await fixture.loginOK(subject: "events.1", email: "jane.events@example.com")
            let accountID = login["userId"]?.stringValue ?? ""
            let refreshToken = try #require(login["refreshToken"]?.stringValue)
            // A failed login: audience is wrong.
            let nonce = fixture.freshNonce()
            let wrongAudience = fixture.token(subject: "events.1", nonce: nonce) { $0.claims["aud"] = "com.other.app" }
            #expect(try await fixture.login(token: wrongAudience, nonce: nonce).status == 401)
            // Refresh once, then present the rotated token again: reuse.
            try expectStatus(200, await fixture.refresh(refreshToken))
            #expect(try await fixture.refresh(refreshToken).status == 401)
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(accountID)",
                                                      json: ["status": "disabled"]))
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/accounts/\(accountID)",
                                                      json: ["status": "active"]))
            try expectStatus(204, await fixture.admin("DELETE", "/api/admin/realms/acme/accounts/\(accountID)"))

            let response = try await Self.events(fixture)
            try expectStatus(200, response)
            #expect(response.header("Cache-Control") == "no-store")
            let items = Self.items(response)
            #expect(items.map { $0["type"]?.stringValue ?? "" } == [
                "account.deleted", "account.enabled", "account.disabled", "refresh_token.reused", "login.failed",
                "login.succeeded",
            ])
            let success = try #require(items.last)
            #expect(success["reason"] == "created")
            #expect(success["accountId"]?.stringValue == accountID)
            #expect(success["clientId"] == "ios-app")
            #expect(success["clientIp"] == "127.0.0.1")
            #expect(success["sessionId"]?.stringValue?.isEmpty == false)
            #expect(items[4]["reason"] == "audience")
            #expect(items[4]["clientId"] == "ios-app")
            #expect(items[3]["sessionId"] == success["sessionId"])
            #expect(items[3]["accountId"]?.stringValue == accountID)
            #expect(items[2]["actor"] == "env")
            #expect(items.allSatisfy { $0["realmId"] == "acme" && $0.keys.count == 10 })
            let text = response.text
            for secret in [refreshToken, login["accessToken"]?.stringValue ?? "-", "jane.events@example.com", nonce,
                           AppleTokenMinter.nonceClaim(for: nonce)] {
                #expect(!text.contains(secret))
            }
        }
    }

    @Test("pages are bounded and chained by cursor, type filters, bad parameters are a 400 naming them")
    func pagingAndFilters() async throws {
        try await NativeLoginFixture.with { fixture in
            for index in 0..<5 { try await fixture.loginOK(subject: "paging.\(index)") }
            let nonce = fixture.freshNonce()
            #expect(try await fixture.login(token: fixture.token(nonce: nonce) { $0.claims["iss"] = "https://evil.example" },
                                            nonce: nonce).status == 401)
            var seen: [Int64] = []
            var cursor: String?
            repeat {
                let page = try await Self.events(fixture, "?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""))
                try expectStatus(200, page)
                let items = Self.items(page)
                #expect(items.count <= 2)
                seen += items.compactMap { $0["id"]?.doubleValue.map { Int64($0) } }
                cursor = page.json["nextCursor"]?.stringValue
            } while cursor != nil
            #expect(seen.count == 6)
            #expect(seen == seen.sorted(by: >), "newest first")
            let failures = Self.items(try await Self.events(fixture, "?type=login.failed"))
            #expect(failures.count == 1)
            #expect(failures.first?["reason"] == "issuer")

            for (query, field) in [("?type=login.maybe", "type"), ("?limit=0", "limit"), ("?limit=201", "limit"),
                                   ("?cursor=bm90LWEtY3Vyc29y", "cursor")] {
                let bad = try await Self.events(fixture, query)
                #expect(bad.status == 400, "\(query)")
                #expect(bad.json["code"] == "bad_request")
                #expect(bad.json["details"]?["fields"]?[field] != nil, "\(query): \(bad.text)")
            }
            #expect(try await fixture.admin("GET", "/api/admin/realms/nowhere/events").status == 404)
            let anonymous = try await fixture.admin("GET", "/api/admin/realms/acme/events", token: nil)
            #expect(anonymous.status == 401)
            let wrongToken = try await fixture.admin("GET", "/api/admin/realms/nowhere/events",
                                                     token: "not-the-admin-token-0123456789abcdef")
            #expect(wrongToken.status == 401)
        }
    }

    @Test("a reused authorization code is recorded")
    func authorizationCodeReuse() async throws {
        try await RunningHerald.with { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            #expect(try await fixture.exchange(code).status == 200)
            #expect(try await fixture.exchange(code).status == 400)
            let response = try await herald.admin("GET", "/api/admin/realms/acme/events?type=authorization_code.reused")
            guard case .array(let items)? = response.json["items"] else { Issue.record("no items"); return }
            #expect(items.count == 1)
            #expect(items.first?["clientId"] == .string(OAuthFixture.publicClient))
            #expect(items.first?["sessionId"]?.stringValue?.isEmpty == false)
        }
    }

    @Test("the maintenance loop purges events older than HERALD_EVENT_RETENTION and keeps newer ones")
    func retentionPurge() async throws {
        let clock = TestClock(Date())
        try await NativeLoginFixture.with(clock: clock, configure: { $0.eventRetentionDays = 1 }) { fixture in
            try await fixture.loginOK(subject: "retention.old")
            clock.advance(by: 86_400 + 1)
            try await fixture.loginOK(subject: "retention.new")
            #expect(Self.items(try await Self.events(fixture)).count == 2)
            // A loop of our own runs one round at start; its pause parks it until stop().
            let (rounds, roundDone) = AsyncStream<Void>.makeStream()
            let loop = MaintenanceLoopTests.loop(fixture.herald.application.services, pause: {
                roundDone.yield()
                try? await Task.sleep(for: .seconds(3_600))
            })
            loop.start()
            var iterator = rounds.makeAsyncIterator()
            _ = await iterator.next()
            await loop.shutdown()
            let left = Self.items(try await Self.events(fixture))
            #expect(left.count == 1)
            #expect(left.first?["at"]?.doubleValue == clock.now.timeIntervalSince1970.rounded(.down))
        }
    }

    @Test("configuration: HERALD_EVENT_RETENTION is days from 1 to 3650, default 30")
    func retentionConfiguration() throws {
        #expect(try HeraldConfiguration.load(arguments: [], environment: [:]).eventRetentionDays == 30)
        #expect(try HeraldConfiguration.load(arguments: ["--event-retention", "7"], environment: [:]).eventRetentionDays == 7)
        for bad in ["0", "3651", "7d", "-1", ""] where !bad.isEmpty {
            #expect(throws: ConfigurationError.self) {
                _ = try HeraldConfiguration.load(arguments: [], environment: ["HERALD_EVENT_RETENTION": bad])
            }
        }
    }
}

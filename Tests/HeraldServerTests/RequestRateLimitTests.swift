import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Issue #16: `/token`, `/introspect`, `/revoke`, session refresh and `/authorize` have request limits per client IP and
/// per client, checked and counted in one step.
@Suite("Request rate limits")
struct RequestRateLimitTests {
    static func limits(perIP: String, perClient: String) -> (inout HeraldConfiguration) -> Void {
        { configuration in
            configuration.requestLimits.perIP = RequestLimit(parsing: perIP)
            configuration.requestLimits.perClient = RequestLimit(parsing: perClient)
        }
    }

    static func refreshForm(client: String = OAuthFixture.publicClient) -> [(String, String)] {
        [("grant_type", "refresh_token"), ("refresh_token", "rt_not-a-real-token"), ("client_id", client)]
    }

    @Test("a concurrent burst at /token is admitted exactly up to the limit", arguments: Backend.allCases)
    func concurrentBurstAdmitsExactlyTheLimit(backend: Backend) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(backend: backend, configure: Self.limits(perIP: "5/3600", perClient: "1000/3600"),
                                     now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let responses = try await withThrowingTaskGroup(of: TestHTTPClient.Response.self) { group in
                for _ in 0..<24 { group.addTask { try await fixture.post("token", Self.refreshForm()) } }
                var all: [TestHTTPClient.Response] = []
                for try await response in group { all.append(response) }
                return all
            }
            let admitted = responses.filter { $0.status != 429 }
            #expect(admitted.count == 5, "\(responses.map(\.status))")
            #expect(admitted.allSatisfy { $0.status == 400 && $0.json["error"] == "invalid_grant" })
            for limited in responses where limited.status == 429 {
                #expect(limited.json["error"] == "temporarily_unavailable")
                #expect(limited.json["error_description"]?.stringValue?.isEmpty == false)
                #expect(Int(limited.header("Retry-After") ?? "").map { (1...3600).contains($0) } == true)
                #expect(limited.header("Cache-Control") == "no-store")
            }
            try await herald.application.services.requestLimiter.share()
            let hits = try await herald.application.services.database.read { db in
                try db.queryOne("SELECT hits FROM request_windows WHERE endpoint = 'token' AND subject = 'ip:127.0.0.1'")?
                    .int("hits")
            }
            #expect(hits == 5, "refused requests are not counted")
        }
    }

    @Test("a concurrent burst of session refreshes of one client is admitted up to the per-client limit",
          arguments: Backend.allCases)
    func sessionRefreshPerClientBurst(backend: Backend) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(backend: backend, configure: Self.limits(perIP: "1000/3600", perClient: "4/3600"),
                                     now: clock.closure) { herald in
            _ = try await OAuthFixture.make(herald)
            func refresh(_ client: String) async throws -> TestHTTPClient.Response {
                try await herald.request("POST", "/api/auth/\(OAuthFixture.realm)/session/refresh",
                                         headers: [("Content-Type", "application/json")],
                                         body: Array(#"{"refreshToken":"rt_unknown","clientId":"\#(client)"}"#.utf8))
            }
            let responses = try await withThrowingTaskGroup(of: TestHTTPClient.Response.self) { group in
                for _ in 0..<16 { group.addTask { try await refresh("ios-app") } }
                var all: [TestHTTPClient.Response] = []
                for try await response in group { all.append(response) }
                return all
            }
            #expect(responses.filter { $0.status == 401 }.count == 4, "\(responses.map(\.status))")
            let limited = responses.filter { $0.status == 429 }
            #expect(limited.count == 12)
            #expect(limited.allSatisfy { $0.json["code"] == "rate_limited" && $0.json["status"] == 429
                && $0.json["requestId"] != nil && $0.header("Retry-After") != nil })
            // Another client's budget is its own.
            #expect(try await refresh("other-app").status == 401)
        }
    }

    @Test("a request refused by the per-client limit does not use up its address's budget")
    func perClientRefusalGivesBackTheAddressCount() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(configure: Self.limits(perIP: "3/3600", perClient: "1/3600"), now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            var statuses: [Int] = []
            for client in ["a", "a", "a", "b", "c", "d"] {
                statuses.append(try await fixture.post("token", Self.refreshForm(client: client)).status)
            }
            // a: admitted (401 unknown client), twice refused by its client limit; b and c fill
            // the address's three; d is refused by the address limit.
            #expect(statuses == [401, 429, 429, 401, 401, 429])
        }
    }

    @Test("/authorize over its limit answers 429 JSON, never a redirect, and a new window admits again")
    func authorizeLimitAndWindowEnd() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(configure: Self.limits(perIP: "2/60", perClient: "off"), now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            #expect(try await fixture.authorize(state: "s1").status == 302)
            #expect(try await fixture.authorize(state: "s2").status == 302)
            let limited = try await fixture.authorize(state: "s3")
            #expect(limited.status == 429)
            #expect(limited.header("Location") == nil)
            #expect(limited.json["error"] == "temporarily_unavailable")
            let retryAfter = try #require(Int(limited.header("Retry-After") ?? ""))
            #expect((1...60).contains(retryAfter))
            // Other endpoints have budgets of their own.
            #expect(try await fixture.post("token", Self.refreshForm()).status == 400)
            clock.advance(by: TimeInterval(retryAfter))
            #expect(try await fixture.authorize(state: "s4").status == 302)
        }
    }

    /// Issue #38 item 6: `/introspect` and `/revoke` check client secrets, so they are limited
    /// as `/token` is: counted before client authentication, an unreadable request included.
    @Test("/introspect and /revoke count every request, unreadable ones too, before client authentication, each in its own budget",
          arguments: ["introspect", "revoke"])
    func inspectionEndpointsAreLimitedBeforeAuthentication(endpoint: String) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(configure: Self.limits(perIP: "3/3600", perClient: "off"), now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let form = [("token", "rt_not-a-real-token")]
            let unreadable = try await herald.request("POST", "/api/oauth/\(OAuthFixture.realm)/\(endpoint)",
                                                      headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                      body: Array("token=a&token=b".utf8))
            #expect(unreadable.status == 400 && unreadable.json["error"] == "invalid_request")
            for _ in 0..<2 {
                let wrong = try await fixture.post(endpoint, form, basic: (OAuthFixture.confidentialClient, "wrong-secret"))
                #expect(wrong.status == 401 && wrong.json["error"] == "invalid_client")
            }
            // Over the address's budget even with the right secret: the 429 comes before authentication.
            let limited = try await fixture.post(endpoint, form, basic: (OAuthFixture.confidentialClient, fixture.secret))
            #expect(limited.status == 429)
            #expect(limited.json["error"] == "temporarily_unavailable")
            #expect(Int(limited.header("Retry-After") ?? "").map { (1...3600).contains($0) } == true)
            #expect(limited.header("Cache-Control") == "no-store")
            #expect(!limited.text.contains(fixture.secret))
            // The other endpoints' budgets are their own.
            let other = endpoint == "introspect" ? "revoke" : "introspect"
            #expect(try await fixture.post(other, form, basic: (OAuthFixture.confidentialClient, fixture.secret)).status == 200)
            #expect(try await fixture.post("token", Self.refreshForm()).status == 400)
            try await herald.application.services.requestLimiter.share()
            let hits = try await herald.application.services.database.read { db in
                try db.queryOne("SELECT hits FROM request_windows WHERE endpoint = ? AND subject = 'ip:127.0.0.1'", .text(endpoint))?
                    .int("hits")
            }
            #expect(hits == 3)
        }
    }

    @Test("/introspect and /revoke count per presented client id too", arguments: ["introspect", "revoke"])
    func inspectionEndpointsAreLimitedPerClient(endpoint: String) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(configure: Self.limits(perIP: "1000/3600", perClient: "2/3600"), now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let form = [("token", "rt_not-a-real-token")]
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(try await fixture.post(endpoint, form, basic: (OAuthFixture.confidentialClient, "wrong-secret")).status)
            }
            statuses.append(try await fixture.post(endpoint, form, basic: (OAuthFixture.otherClient, fixture.otherSecret)).status)
            #expect(statuses == [401, 401, 429, 200])
        }
    }

    @Test("limits off count nothing")
    func limitsOff() async throws {
        try await RunningHerald.with(configure: Self.limits(perIP: "off", perClient: "off")) { herald in
            let fixture = try await OAuthFixture.make(herald)
            for _ in 0..<3 { #expect(try await fixture.post("token", Self.refreshForm()).status == 400) }
            try await herald.application.services.requestLimiter.share()
            let rows = try await herald.application.services.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM request_windows")?.int("n")
            }
            #expect(rows == 0)
        }
    }

    @Test("configuration: N/SECONDS or off, anything else a clear error")
    func configuration() throws {
        let defaults = try HeraldConfiguration.load(arguments: [], environment: [:])
        #expect(defaults.requestLimits.perIP == RequestLimit(requests: 600, windowSeconds: 60))
        #expect(defaults.requestLimits.perClient == RequestLimit(requests: 60_000, windowSeconds: 60))
        let set = try HeraldConfiguration.load(arguments: ["--rate-limit-per-client", "off"],
                                               environment: ["HERALD_RATE_LIMIT_PER_IP": "30/10"])
        #expect(set.requestLimits.perIP == RequestLimit(requests: 30, windowSeconds: 10))
        #expect(set.requestLimits.perClient == nil)
        for bad in ["0/60", "10", "10/0", "10/86401", "-1/60", "ten/60", "10/60/1", "/60"] {
            #expect(throws: ConfigurationError.self) {
                _ = try HeraldConfiguration.load(arguments: [], environment: ["HERALD_RATE_LIMIT_PER_IP": bad])
            }
        }
    }
}

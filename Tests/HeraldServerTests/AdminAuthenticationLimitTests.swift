import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Testing
@testable import HeraldServer

/// Failed admin authentications per client IP (`HERALD_ADMIN_AUTH_FAILURE_LIMIT`).
@Suite("Admin authentication failure limit")
struct AdminAuthenticationLimitTests {
    static let wrongToken = "hadm_wrong-token-0123456789abcdef0123456789abcdef"

    static func start(limit: RequestLimit?, clock: TestClock,
                      _ body: (RunningHerald) async throws -> Void) async throws {
        try await RunningHerald.with(configure: { $0.requestLimits.adminFailuresPerIP = limit }, now: clock.closure, body)
    }

    @Test("past the limit wrong and missing tokens from the IP are 429 until the window ends; the right token gets in, logged")
    func limitRefusesUntilWindowEnds() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_100))  // 200 s into a 300 s window
        try await Self.start(limit: RequestLimit(requests: 3, windowSeconds: 300), clock: clock) { herald throws in
            for _ in 0..<3 {
                let wrong = try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken)
                #expect(wrong.status == 401)
            }
            let limited = try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken)
            #expect(limited.status == 429)
            #expect(limited.json["code"]?.stringValue == "rate_limited")
            #expect(limited.header("Retry-After") == "100")
            #expect(!limited.text.contains(Self.wrongToken))
            // A request without a credential keeps its answer while the window is full.
            let bare = try await herald.admin("GET", "/api/admin/realms", token: nil)
            #expect(bare.status == 429 && bare.header("Retry-After") == "100")
            // Issue #38 item 12: a right token (≥ 256 bits, never a guess) is not locked out by
            // failures from its address (a shared NAT or proxy); its admission is logged by name.
            #expect(try await herald.admin("GET", "/api/admin/realms").status == 200)
            let admitted = try #require(herald.logs.captured.first { $0.contains("admin_authenticated_over_failure_limit") })
            #expect(admitted.contains(#""actor":"\#(AdminTokenStore.environmentTokenName)""#))
            let logs = herald.logs.captured.joined(separator: "\n")
            #expect(!logs.contains(RunningHerald.adminToken))
            #expect(!logs.contains(Self.wrongToken))
            // Still refused, and not counted, wrong tokens stay 429 until the window ends.
            #expect(try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken).status == 429)
            clock.advance(by: 100)
            #expect(try await herald.admin("GET", "/api/admin/realms").status == 200)
            #expect(try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken).status == 401)
        }
    }

    @Test("a right token under the limit is admitted without the over-limit log line")
    func rightTokenUnderTheLimitIsNotFlagged() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_100))
        try await Self.start(limit: RequestLimit(requests: 3, windowSeconds: 300), clock: clock) { herald throws in
            #expect(try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken).status == 401)
            #expect(try await herald.admin("GET", "/api/admin/realms").status == 200)
            #expect(!herald.logs.captured.joined(separator: "\n").contains("admin_authenticated_over_failure_limit"))
        }
    }

    @Test("successes and requests without credentials are not counted")
    func onlyFailuresCount() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_100))
        try await Self.start(limit: RequestLimit(requests: 3, windowSeconds: 300), clock: clock) { herald throws in
            for _ in 0..<5 {
                #expect(try await herald.admin("GET", "/api/admin/realms", token: nil).status == 401)
            }
            for _ in 0..<2 {
                #expect(try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken).status == 401)
            }
            for _ in 0..<10 {
                #expect(try await herald.admin("GET", "/api/admin/realms").status == 200)
            }
            // The third failure is still within the limit; the fourth is not.
            #expect(try await herald.admin("GET", "/api/admin/realms", token: "Basic-ish").status == 401)
            #expect(try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken).status == 429)
        }
    }

    @Test("concurrent failures are never counted past the limit")
    func concurrentFailuresStopAtTheLimit() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_750_000_100))
        try await Self.start(limit: RequestLimit(requests: 5, windowSeconds: 300), clock: clock) { herald throws in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<24 {
                    group.addTask { try await herald.admin("GET", "/api/admin/audit", token: Self.wrongToken).status }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.filter { $0 == 401 }.count == 5)
            #expect(statuses.filter { $0 == 429 }.count == 19)
        }
    }

    @Test("the limit can be turned off, and the default is 20 per 300 s")
    func configuration() async throws {
        #expect(RequestLimits().adminFailuresPerIP == RequestLimit(requests: 20, windowSeconds: 300))
        let off = try HeraldConfiguration.load(arguments: ["--admin-auth-failure-limit", "off"], environment: [:])
        #expect(off.requestLimits.adminFailuresPerIP == nil)
        let env = try HeraldConfiguration.load(arguments: [], environment: ["HERALD_ADMIN_AUTH_FAILURE_LIMIT": "5/60"])
        #expect(env.requestLimits.adminFailuresPerIP == RequestLimit(requests: 5, windowSeconds: 60))
        #expect(throws: ConfigurationError.self) {
            try HeraldConfiguration.load(arguments: [], environment: ["HERALD_ADMIN_AUTH_FAILURE_LIMIT": "lots"])
        }
        let clock = TestClock()
        try await Self.start(limit: nil, clock: clock) { herald throws in
            for _ in 0..<30 {
                #expect(try await herald.admin("GET", "/api/admin/realms", token: Self.wrongToken).status == 401)
            }
        }
    }
}

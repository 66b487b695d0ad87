import Testing
@testable import HeraldServer

/// Each rule that turns Apple's health into a warning, on its own.
@Suite("Apple health warnings")
struct AppleHealthCheckTests {
    static let now: Int64 = 1_800_000_000

    static func health(keys: AppleHealth.Keys? = nil, exchange: AppleHealth.Exchange? = nil, refusal: AppleHealth.Refusal? = nil,
                       lastNotification: Int64? = nil, refreshTokens: Int64 = 0, failedRevocations: Int64 = 0,
                       returnUrls: Int = 0, keyStored: Bool = true, enabled: Bool = true) -> AppleHealth {
        AppleHealth(
            configured: true, enabled: enabled,
            keys: keys ?? .init(lastSuccessAt: now - 60, ageSeconds: 60, freshUntil: now + 3600, keyIds: ["k1"],
                                lastFailure: nil, stale: false),
            webFlow: .init(teamIdSet: true, keyIdSet: true, privateKeyStored: keyStored, returnUrls: returnUrls,
                           lastExchange: exchange, lastRefusal: refusal),
            notifications: .init(last: lastNotification.map { .init(type: "consent-revoked", receivedAt: $0) }, byType: [:]),
            tokens: .init(refreshTokens: refreshTokens, pendingRevocations: 0, failedRevocations: failedRevocations))
    }

    static func kinds(_ health: AppleHealth, oldestToken: Int64? = nil) -> [String] {
        AppleHealthCheck.warnings(health, oldestRefreshTokenAt: oldestToken, now: now).map(\.kind.rawValue)
    }

    @Test("a healthy realm, or one with Apple disabled, has no warning")
    func healthyHasNone() {
        #expect(Self.kinds(Self.health()).isEmpty)
        #expect(Self.kinds(Self.health(failedRevocations: 3, enabled: false)).isEmpty)
    }

    @Test("invalid_client warns until an exchange succeeds after it; other refusals and old ones do not")
    func secretRejection() {
        let refusal = AppleHealth.Refusal(error: "invalid_client", at: Self.now - 600)
        #expect(Self.kinds(Self.health(refusal: refusal)) == ["client_secret_rejected"])
        let message = AppleHealthCheck.warnings(Self.health(refusal: refusal), oldestRefreshTokenAt: nil, now: Self.now)
            .first?.message ?? ""
        #expect(message.hasPrefix("Apple rejected the client secret at 2027-01-15 07:50 UTC (invalid_client)"))
        #expect(Self.kinds(Self.health(exchange: .init(ok: true, error: nil, at: Self.now - 60), refusal: refusal)).isEmpty)
        #expect(Self.kinds(Self.health(exchange: .init(ok: false, error: "invalid_client", at: Self.now - 60)))
                == ["client_secret_rejected"])
        #expect(Self.kinds(Self.health(refusal: .init(error: "invalid_grant", at: Self.now - 600))).isEmpty)
        #expect(Self.kinds(Self.health(refusal: .init(error: "invalid_client", at: Self.now - 8 * 86_400))).isEmpty)
    }

    @Test("keys past freshness after a failed refresh are stale; keys never fetched are unavailable")
    func keys() {
        let stale = AppleHealth.Keys(lastSuccessAt: Self.now - 90_000, ageSeconds: 90_000, freshUntil: Self.now - 3600,
                                     keyIds: ["k1"], lastFailure: .init(outcome: "timeout", at: Self.now - 30), stale: true)
        #expect(Self.kinds(Self.health(keys: stale)) == ["stale_keys"])
        let never = AppleHealth.Keys(lastSuccessAt: nil, ageSeconds: nil, freshUntil: nil, keyIds: [],
                                     lastFailure: .init(outcome: "network_error", at: Self.now - 30), stale: false)
        #expect(Self.kinds(Self.health(keys: never)) == ["keys_unavailable"])
        // Not fetched yet (nobody signed in): nothing to say.
        let notYet = AppleHealth.Keys(lastSuccessAt: nil, ageSeconds: nil, freshUntil: nil, keyIds: [], lastFailure: nil, stale: false)
        #expect(Self.kinds(Self.health(keys: notYet)).isEmpty)
    }

    @Test("30 days without a notification while Apple tokens are stored warns, counted from the oldest token if none came")
    func silence() {
        let days = AppleHealthCheck.silenceDays * 86_400
        #expect(Self.kinds(Self.health(lastNotification: Self.now - days - 1, refreshTokens: 4)) == ["notifications_silent"])
        #expect(Self.kinds(Self.health(lastNotification: Self.now - days - 1, refreshTokens: 0)).isEmpty)
        #expect(Self.kinds(Self.health(lastNotification: Self.now - 86_400, refreshTokens: 4)).isEmpty)
        #expect(Self.kinds(Self.health(refreshTokens: 4), oldestToken: Self.now - 86_400).isEmpty)
        #expect(Self.kinds(Self.health(refreshTokens: 4), oldestToken: Self.now - days) == ["notifications_silent"])
    }

    @Test("given-up revocations and a web flow without its key warn")
    func revocationsAndWebFlow() {
        #expect(Self.kinds(Self.health(failedRevocations: 2)) == ["revocations_failed"])
        let incomplete = AppleHealthCheck.warnings(Self.health(returnUrls: 1, keyStored: false), oldestRefreshTokenAt: nil,
                                                   now: Self.now)
        #expect(incomplete.map(\.kind) == [.webFlowIncomplete])
        #expect(incomplete.first?.message.contains("the private key is missing") == true)
        #expect(Self.kinds(Self.health(returnUrls: 0, keyStored: false)).isEmpty)
    }
}

import Foundation
import HeraldApple
import ProviderKeys
import Realms
import Storage

/// Builds a realm's overview from what is already kept elsewhere: the hourly sign-in counts
/// (`LoginCounts`), the Apple provider's configuration, the JWKS cache's health, this node's
/// last code exchange, the latest refusal event, and Apple's tables (`AppleRealmActivity`). Its
/// cost does not grow with the realm's history: the counts are at most slots × labels rows, and
/// every other read is one indexed lookup.
struct RealmOverviews: Sendable {
    let realms: RealmStore
    let appleProviders: AppleProviderStore
    let events: SecurityEventLog
    let counts: LoginCounts
    let exchanges: AppleExchangeOutcomes
    let warnings: AppleHealthWarnings
    /// Apple's JWKS cache health (`AppleJWKSCache.metrics`).
    let appleKeys: @Sendable () -> JWKSMetrics
    let database: any Database
    let now: @Sendable () -> Date

    /// The realm's overview over `window`, nil when there is no such realm. Refreshes the
    /// realm's warning gauges with what it found.
    func overview(realmID: String, window: RealmOverviewWindow) async throws -> RealmOverview? {
        guard try await realms.realm(realmID) != nil else { return nil }
        let at = now().unixSeconds
        let from = window.start(at: at)
        let buckets = try await counts.buckets(realmID: realmID, from: from, slotSeconds: window.slotSeconds)
        let (apple, warnings) = try await appleHealth(realmID: realmID, since: from, at: at)
        return Self.overview(realmID: realmID, window: window, from: from, at: at, buckets: buckets, apple: apple,
                             warnings: warnings)
    }

    /// The realm's Apple health and its warnings (notifications counted from `since`); the
    /// warning gauges are set to what it found.
    func appleHealth(realmID: String, since: Int64, at: Int64) async throws -> (AppleHealth, [RealmOverview.Warning]) {
        let config = try await appleProviders.config(realmID: realmID)
        // A realm without Apple has nothing in Apple's tables worth a read (the monitor visits every realm).
        let activity = config == nil ? AppleRealmActivity()
            : try await AppleRealmActivity.load(database, realmID: realmID, since: since)
        let refusal = config == nil ? nil
            : try await events.list(realmID: realmID, type: .appleCodeExchangeRefused, page: try PageRequest(limit: 1)).items.first
        let health = Self.health(config: config, keys: appleKeys(), exchange: exchanges.last(realmID: realmID),
                                 refusal: refusal, activity: activity, at: at)
        let found = AppleHealthCheck.warnings(health, oldestRefreshTokenAt: activity.oldestRefreshTokenAt, now: at)
        if health.configured && health.enabled {
            warnings.replace(realmID: realmID, with: Set(found.map(\.kind)))
        } else {
            warnings.forget(realmID: realmID)
        }
        return (health, found)
    }

    static func health(config: AppleProviderConfig?, keys: JWKSMetrics, exchange: AppleExchangeOutcomes.Outcome?,
                       refusal: SecurityEvent?, activity: AppleRealmActivity, at: Int64) -> AppleHealth {
        let lastSuccess = keys.lastSuccessAt.map { Int64($0.timeIntervalSince1970) }
        let freshUntil = keys.freshUntil.map { Int64($0.timeIntervalSince1970) }
        return AppleHealth(
            configured: config != nil, enabled: config?.enabled ?? false,
            keys: AppleHealth.Keys(
                lastSuccessAt: lastSuccess, ageSeconds: lastSuccess.map { max(0, at - $0) }, freshUntil: freshUntil,
                keyIds: keys.keyIDs,
                lastFailure: keys.lastFailure.map { .init(outcome: $0.outcome.rawValue, at: Int64($0.at.timeIntervalSince1970)) },
                stale: freshUntil.map { at >= $0 } == true && keys.lastFetchFailed),
            webFlow: AppleHealth.WebFlow(
                teamIdSet: config?.teamId?.isEmpty == false, keyIdSet: config?.keyId?.isEmpty == false,
                privateKeyStored: config?.privateKeyConfigured ?? false, returnUrls: config?.returnUrls.count ?? 0,
                lastExchange: exchange.map { .init(ok: $0.failure == nil, error: $0.failure?.rawValue, at: $0.at) },
                lastRefusal: refusal.map { .init(error: $0.reason ?? "refused", at: $0.at) }),
            notifications: AppleHealth.Notifications(
                last: activity.lastNotification.map { .init(type: $0.type, receivedAt: $0.receivedAt) },
                byType: activity.notificationsByType),
            tokens: AppleHealth.Tokens(refreshTokens: activity.refreshTokens, pendingRevocations: activity.pendingRevocations,
                                       failedRevocations: activity.failedRevocations))
    }

    /// Sums the buckets into the window's slots and totals. The buckets come summed per slot
    /// and labels and sorted by slot then labels (`LoginCounts.buckets`), so each is appended
    /// to its slot as it comes.
    static func overview(realmID: String, window: RealmOverviewWindow, from: Int64, at: Int64,
                         buckets: [LoginCounts.Bucket], apple: AppleHealth,
                         warnings: [RealmOverview.Warning]) -> RealmOverview {
        struct DoorKey: Hashable { let provider: String; let door: String }
        struct ReasonKey: Hashable { let outcome: String; let reason: String }
        var slotCounts = [[RealmOverview.Count]](repeating: [], count: window.slotCount)
        var slotSums = [(success: Int64, rejected: Int64, error: Int64)](repeating: (0, 0, 0), count: window.slotCount)
        var totals = RealmOverview.Totals()
        var doors: [DoorKey: RealmOverview.ProviderDoor] = [:]
        var reasons: [ReasonKey: Int64] = [:]
        for bucket in buckets {
            guard bucket.start >= from else { continue }
            let index = Int((bucket.start - from) / window.slotSeconds)
            guard index < window.slotCount else { continue }
            slotCounts[index].append(RealmOverview.Count(provider: bucket.provider, door: bucket.door, outcome: bucket.outcome,
                                                         reason: bucket.reason, count: bucket.count))
            totals.attempts += bucket.count
            let doorKey = DoorKey(provider: bucket.provider, door: bucket.door)
            var door = doors[doorKey] ?? RealmOverview.ProviderDoor(provider: bucket.provider, door: bucket.door)
            door.attempts += bucket.count
            switch bucket.outcome {
            case "success":
                totals.success += bucket.count
                door.success += bucket.count
                slotSums[index].success += bucket.count
                if bucket.reason == "created" { totals.newAccounts += bucket.count }
            case "rejected":
                totals.rejected += bucket.count
                door.rejected += bucket.count
                slotSums[index].rejected += bucket.count
            default:
                totals.error += bucket.count
                door.error += bucket.count
                slotSums[index].error += bucket.count
            }
            doors[doorKey] = door
            reasons[ReasonKey(outcome: bucket.outcome, reason: bucket.reason), default: 0] += bucket.count
        }
        let slots = (0..<window.slotCount).map { index in
            RealmOverview.Slot(start: from + Int64(index) * window.slotSeconds, success: slotSums[index].success,
                               rejected: slotSums[index].rejected, error: slotSums[index].error, counts: slotCounts[index])
        }
        let byReason = reasons.map { RealmOverview.ReasonCount(outcome: $0.key.outcome, reason: $0.key.reason, count: $0.value) }
            .sorted { ($0.count, $1.outcome, $1.reason) > ($1.count, $0.outcome, $0.reason) }
        return RealmOverview(
            realmId: realmID, window: window.rawValue, from: from, generatedAt: at, slotSeconds: window.slotSeconds,
            totals: totals, byProviderDoor: doors.values.sorted { ($0.provider, $0.door) < ($1.provider, $1.door) },
            byReason: byReason, slots: slots, apple: apple, warnings: warnings)
    }
}

import Foundation
import JOSE
import Synchronization

/// An identity provider's signing keys (Apple's, Google's), cached per JWKS URL (one cache per fetcher).
///
/// - Fresh keys answer at once. `Cache-Control: max-age` sets freshness (default 24 h, floor 5 min).
/// - An unknown kid or expired keys trigger a refresh; at most one fetch starts per 30 s and
///   concurrent callers join the one in flight, so a flood of made-up kids costs the provider
///   one request per 30 s.
/// - Stale-if-error: when refreshing fails, expired keys keep verifying for up to 7 days past
///   their freshness. Only when no cached key can decide is the answer `unavailable`.
/// - Waiting for a fetch suspends the caller; the actor stays free for lookups of cached kids,
///   so a hanging upstream never delays requests that do not need it. (Once keys are past
///   their freshness every lookup wants the refresh, and waits for it — at most the client's
///   total timeout — before falling back to the stale keys.)
/// - The first fetch counts toward the 30 s interval: a kid first seen within 30 s of any
///   fetch is `unknown` (or `unavailable`, if that fetch failed) without another request.
public actor JWKSCache: SigningKeySource {
    private let fetcher: any JWKSFetching
    private let policy: JWKSCachePolicy
    private let now: @Sendable () -> Date
    private let counters = JWKSCounters()

    /// The last fetched keys and until when they are fresh; nil before the first successful
    /// fetch. Behind a lock rather than the actor, so `freshSigningKey` reads them with no hop.
    private let fetched = Mutex<FetchedKeys?>(nil)
    /// When the last fetch started, and whether it failed.
    private var lastAttempt: Date?
    private var lastAttemptFailed = false
    private var inFlight: Task<Void, Never>?
    /// Callers currently suspended on the fetch in flight (observed by tests).
    package private(set) var fetchWaiters = 0

    private struct FetchedKeys {
        let keys: [String: PublicKey]
        let freshUntil: Date
    }

    /// Creates a cache over any fetcher.
    public init(fetcher: any JWKSFetching, policy: JWKSCachePolicy = JWKSCachePolicy(),
                now: @escaping @Sendable () -> Date) {
        self.fetcher = fetcher
        self.policy = policy
        self.now = now
    }

    /// Creates a cache fetching `configuration.url` over HTTP.
    public init(configuration: JWKSClientConfiguration,
                policy: JWKSCachePolicy = JWKSCachePolicy(),
                now: @escaping @Sendable () -> Date) {
        self.init(fetcher: JWKSClient(configuration: configuration), policy: policy, now: now)
    }

    /// Resolves a kid, refreshing when the keys are expired or the kid is unknown (rate-limited).
    public func signingKey(for keyID: String) async -> SigningKeyLookup {
        if let key = freshSigningKey(for: keyID) { return .found(key) }
        await refreshIfAllowed()
        let current = now()
        if let key = fetched.withLock({ $0?.keys[keyID] }), isUsable(at: current) { return .found(key) }
        if isFresh(at: current), !lastAttemptFailed { return .unknown }
        return .unavailable(retryAfterSeconds: retryAfter(at: current))
    }

    /// A cached key while the keys are fresh: what `signingKey(for:)` answers at once, read
    /// without awaiting the actor.
    public nonisolated func freshSigningKey(for keyID: String) -> PublicKey? {
        let at = now()
        return fetched.withLock { fetched in
            guard let fetched, at < fetched.freshUntil else { return nil }
            return fetched.keys[keyID]
        }
    }

    /// Fetch counters and the keys' health (last success, `kid`s, last failure); readable
    /// without awaiting the actor.
    public nonisolated var metrics: JWKSMetrics { counters.snapshot() }

    private func refreshIfAllowed() async {
        if inFlight == nil {
            if let lastAttempt, now().timeIntervalSince(lastAttempt) < policy.minimumRefreshInterval { return }
            lastAttempt = now()
            // The task inherits this actor, so `apply` runs before anyone awaiting it resumes.
            inFlight = Task {
                let result = await fetcher.fetchKeySet()
                apply(result)
            }
        }
        guard let task = inFlight else { return }
        fetchWaiters += 1
        await task.value
        fetchWaiters -= 1
    }

    private func apply(_ result: JWKSFetchResult) {
        inFlight = nil
        switch result {
        case .success(let keySet, let cacheControl):
            let at = now()
            let freshUntil = at.addingTimeInterval(policy.freshness(cacheControl: cacheControl))
            fetched.withLock { $0 = FetchedKeys(keys: keySet.keys, freshUntil: freshUntil) }
            lastAttemptFailed = false
            counters.recordSuccess(at: at, keyIDs: Array(keySet.keys.keys), freshUntil: freshUntil,
                                   skippedKeys: keySet.skippedCount)
        case .failure(let outcome):
            // A fetcher reporting `.success` as a failure would be a bug; count it as invalid.
            counters.recordFailure(outcome == .success ? .invalid : outcome, at: now())
            lastAttemptFailed = true
        }
    }

    /// Until when the keys are fresh; nil before the first successful fetch.
    private var freshUntil: Date? { fetched.withLock { $0?.freshUntil } }

    private func isFresh(at date: Date) -> Bool {
        guard let freshUntil else { return false }
        return date < freshUntil
    }

    private func isUsable(at date: Date) -> Bool {
        guard let freshUntil else { return false }
        return date < freshUntil.addingTimeInterval(policy.staleIfErrorWindow)
    }

    /// Seconds until the next fetch may start.
    private func retryAfter(at date: Date) -> Int {
        let interval = policy.minimumRefreshInterval
        guard let lastAttempt else { return Self.retrySeconds(interval) }
        return Self.retrySeconds(lastAttempt.addingTimeInterval(interval).timeIntervalSince(date))
    }

    /// A `Retry-After` value: whole seconds from 1 to 3600, whatever the policy or a clock that
    /// stepped back says (a plain Int(_:) of a huge or NaN interval traps).
    private static func retrySeconds(_ interval: TimeInterval) -> Int {
        guard interval.isFinite, interval > 1 else { return 1 }
        return Int(min(interval, 3600).rounded(.up))
    }
}

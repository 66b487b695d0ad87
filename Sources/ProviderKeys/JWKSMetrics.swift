import Foundation
import Synchronization

/// A point-in-time copy of the JWKS cache's counters and health, for `/metrics` and the realm
/// overview's Apple panel (which tells the operator whether the keys are current, without
/// awaiting the cache actor).
public struct JWKSMetrics: Sendable, Equatable {
    /// A fetch that did not yield a key set, and when it ended.
    public struct Failure: Sendable, Equatable {
        public var outcome: JWKSFetchOutcome
        public var at: Date
    }

    /// Fetches by outcome (every outcome present, zero when none happened).
    public var fetches: [JWKSFetchOutcome: Int]
    /// Keys skipped as malformed or unsupported, summed over all successful fetches.
    public var skippedKeys: Int
    /// When the last successful fetch ended; nil before the first.
    public var lastSuccessAt: Date?
    /// Until when the held keys are fresh (after that a lookup refreshes them first); nil before
    /// the first successful fetch.
    public var freshUntil: Date?
    /// The `kid`s of the keys held, sorted.
    public var keyIDs: [String]
    /// The last failed fetch, kept after a later success (compare with `lastSuccessAt`).
    public var lastFailure: Failure?

    /// All-zero counters, no keys.
    public init() {
        fetches = Dictionary(uniqueKeysWithValues: JWKSFetchOutcome.allCases.map { ($0, 0) })
        skippedKeys = 0
        keyIDs = []
    }

    /// Whether the last fetch failed: the held keys (if any) are the ones from before it.
    public var lastFetchFailed: Bool {
        guard let lastFailure else { return false }
        guard let lastSuccessAt else { return true }
        return lastFailure.at >= lastSuccessAt
    }

    /// The number of fetches that ended with `outcome`.
    public func count(_ outcome: JWKSFetchOutcome) -> Int { fetches[outcome] ?? 0 }

    /// All fetches, whatever their outcome.
    public var totalFetches: Int { fetches.values.reduce(0, +) }
}

/// The live counters behind ``JWKSMetrics``; readable without awaiting the cache actor.
final class JWKSCounters: Sendable {
    private let state = Mutex(JWKSMetrics())

    /// A successful fetch at `at` that brought `keyIDs`, fresh until `freshUntil`.
    func recordSuccess(at: Date, keyIDs: [String], freshUntil: Date, skippedKeys: Int) {
        state.withLock { metrics in
            metrics.fetches[.success, default: 0] += 1
            metrics.skippedKeys += skippedKeys
            metrics.lastSuccessAt = at
            metrics.freshUntil = freshUntil
            metrics.keyIDs = keyIDs.sorted()
        }
    }

    /// A failed fetch at `at`.
    func recordFailure(_ outcome: JWKSFetchOutcome, at: Date) {
        state.withLock { metrics in
            metrics.fetches[outcome, default: 0] += 1
            metrics.lastFailure = JWKSMetrics.Failure(outcome: outcome, at: at)
        }
    }

    func snapshot() -> JWKSMetrics { state.withLock { $0 } }
}

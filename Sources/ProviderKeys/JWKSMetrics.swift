import Synchronization

/// A point-in-time copy of the JWKS cache's counters, for `/metrics`.
public struct JWKSMetrics: Sendable, Equatable {
    /// Fetches by outcome (every outcome present, zero when none happened).
    public var fetches: [JWKSFetchOutcome: Int]
    /// Keys skipped as malformed or unsupported, summed over all successful fetches.
    public var skippedKeys: Int

    /// All-zero counters.
    public init() {
        fetches = Dictionary(uniqueKeysWithValues: JWKSFetchOutcome.allCases.map { ($0, 0) })
        skippedKeys = 0
    }

    /// The number of fetches that ended with `outcome`.
    public func count(_ outcome: JWKSFetchOutcome) -> Int { fetches[outcome] ?? 0 }

    /// All fetches, whatever their outcome.
    public var totalFetches: Int { fetches.values.reduce(0, +) }
}

/// The live counters behind ``JWKSMetrics``; readable without awaiting the cache actor.
final class JWKSCounters: Sendable {
    private let state = Mutex(JWKSMetrics())

    func record(_ outcome: JWKSFetchOutcome, skippedKeys: Int = 0) {
        state.withLock { metrics in
            metrics.fetches[outcome, default: 0] += 1
            metrics.skippedKeys += skippedKeys
        }
    }

    func snapshot() -> JWKSMetrics { state.withLock { $0 } }
}

import Foundation

/// The timing rules of ``JWKSCache``.
public struct JWKSCachePolicy: Sendable {
    /// Freshness when the response has no `Cache-Control: max-age`.
    public var defaultMaxAge: TimeInterval = 24 * 3600
    /// Lower bound on freshness, whatever the response says (also for `no-cache`/`no-store`).
    public var minimumMaxAge: TimeInterval = 5 * 60
    /// Upper bound on freshness, so a misconfigured upstream cannot pin keys for months.
    public var maximumMaxAge: TimeInterval = 7 * 24 * 3600
    /// At most one fetch starts per interval (unknown kids, expiry and failures alike).
    public var minimumRefreshInterval: TimeInterval = 30
    /// How long past their freshness cached keys still verify while refreshes fail.
    public var staleIfErrorWindow: TimeInterval = 7 * 24 * 3600

    /// The defaults: 24 h, floor 5 min, ceiling 7 days, one fetch per 30 s, stale-if-error 7 days.
    public init() {}

    /// The freshness lifetime for a response's `Cache-Control` header.
    func freshness(cacheControl: String?) -> TimeInterval {
        guard let seconds = CacheControlMaxAge.seconds(from: cacheControl) else { return defaultMaxAge }
        return min(max(TimeInterval(seconds), minimumMaxAge), maximumMaxAge)
    }
}

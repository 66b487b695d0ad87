import Foundation

extension Date {
    /// The unix seconds every stored time is kept in: year 1 to year 9999, the span an
    /// ISO 8601 timestamp (and a JWT NumericDate Herald accepts) can name.
    public static let unixSecondsRange: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

    /// Unix seconds, the stored time format, saturated to ``unixSecondsRange``.
    ///
    /// `Int64(_:)` of a Double traps on NaN and beyond ±9.2e18, and a Date holds any Double
    /// (a pinned test clock, `distantFuture` arithmetic). Saturating to year 9999 rather than
    /// to `Int64.max` also leaves room for the `at + ttl` and `at - retention` sums callers do,
    /// which can then never overflow. NaN names no time at all and reads as the epoch.
    public var unixSeconds: Int64 {
        let seconds = timeIntervalSince1970.rounded(.down)
        guard !seconds.isNaN else { return 0 }
        if seconds <= Double(Self.unixSecondsRange.lowerBound) { return Self.unixSecondsRange.lowerBound }
        if seconds >= Double(Self.unixSecondsRange.upperBound) { return Self.unixSecondsRange.upperBound }
        return Int64(seconds)
    }
}

import Foundation
import Storage
import Testing

/// Issue #19: `Date.unixSeconds` converted with `Int64(_:)`, which traps on NaN and beyond
/// ±9.2e18 s. It now saturates to years 1-9999, so `at + ttl` on the result cannot overflow.
@Suite("Unix seconds of a Date")
struct UnixTimeTests {
    @Test func ordinaryTimesRoundDown() {
        #expect(Date(timeIntervalSince1970: 1_750_000_000.9).unixSeconds == 1_750_000_000)
        #expect(Date(timeIntervalSince1970: -1.5).unixSeconds == -2)
        #expect(Date(timeIntervalSince1970: 0).unixSeconds == 0)
    }

    @Test func farOffAndNaNTimesSaturateInsteadOfTrapping() {
        let range = Date.unixSecondsRange
        for seconds in [1e20, 9.3e18, 1e308, Double.infinity, 253_402_300_800] {
            #expect(Date(timeIntervalSince1970: seconds).unixSeconds == range.upperBound, "\(seconds)")
        }
        for seconds in [-1e20, -9.3e18, -1e308, -Double.infinity] {
            #expect(Date(timeIntervalSince1970: seconds).unixSeconds == range.lowerBound, "\(seconds)")
        }
        #expect(Date(timeIntervalSince1970: .nan).unixSeconds == 0)
        // The saturated value still leaves room for the longest TTL sum (a year of refresh).
        #expect(range.upperBound.addingReportingOverflow(31_536_000).overflow == false)
    }
}

import Foundation
@testable import HeraldServer
import Testing

/// A log line's timestamp is formatted from the clock with `Int64(_:)`; a far-off or NaN
/// reading must clamp (years 1-9999, as stored times do) rather than trap the server.
@Suite("Log line timestamps")
struct LogTimestampTests {
    @Test func ordinaryTimeIsRFC3339WithMilliseconds() {
        #expect(Logger.timestamp(Date(timeIntervalSince1970: 1_750_000_000.25)) == "2025-06-15T15:06:40.250Z")
    }

    @Test func farOffAndNaNClocksClampInsteadOfTrapping() {
        #expect(Logger.timestamp(Date(timeIntervalSince1970: 1e20)) == "9999-12-31T23:59:59.000Z")
        #expect(Logger.timestamp(Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59.000Z")
        #expect(Logger.timestamp(Date(timeIntervalSince1970: .nan)) == "1970-01-01T00:00:00.000Z")
        #expect(Logger.timestamp(Date(timeIntervalSince1970: -1e20)) == "0001-01-01T00:00:00.000Z")
    }

    @Test func timesBefore1970KeepTheirMillisecondsInRange() {
        #expect(Logger.timestamp(Date(timeIntervalSince1970: -1.5)) == "1969-12-31T23:59:58.500Z")
        #expect(Logger.timestamp(Date(timeIntervalSince1970: 0.125)) == "1970-01-01T00:00:00.125Z")
    }
}

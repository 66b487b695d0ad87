import Foundation

/// The 6 bytes (big-endian milliseconds since 1970, good to year 10889) that start every key
/// TokenIssuer makes to sort by creation time: session ids (as 12 hex digits) and refresh-token
/// selectors. New keys then land at the right edge of the indexes keyed by them (issue #39).
enum CreationTimePrefix {
    static let byteCount = 6

    static func bytes(at date: Date) -> [UInt8] {
        let milliseconds = UInt64(max(0, date.timeIntervalSince1970 * 1_000))
        return (0..<byteCount).reversed().map { UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64($0))) }
    }
}

import Foundation

extension Date {
    /// Unix seconds, the stored time format.
    public var unixSeconds: Int64 { Int64(timeIntervalSince1970.rounded(.down)) }
}

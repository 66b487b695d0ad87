import Foundation
import Synchronization

/// A settable clock for components that take `now: @Sendable () -> Date`.
public final class TestClock: Sendable {
    private let current: Mutex<Date>

    /// Starts at `start` (default: a fixed, realistic instant).
    public init(_ start: Date = Date(timeIntervalSince1970: 1_750_000_000)) {
        current = Mutex(start)
    }

    /// The current instant.
    public var now: Date { current.withLock { $0 } }

    /// The clock as a closure to inject.
    public var closure: @Sendable () -> Date { { [self] in now } }

    /// Moves time forward.
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }
}

import Synchronization

/// One of the few places for a test database that is open on the shared test cluster at once.
///
/// Swift Testing starts every test case at once; with both backends, well over a hundred cases
/// would otherwise hold PostgreSQL connections together: hundreds of sockets in the test
/// process (Foundation's `Process.run` then crashed, and loopback fetches failed) and a burst of
/// CREATE DATABASE that slowed the whole run. A case waits (suspended) for a slot before it
/// creates its database; the slot is given back when the value goes away.
public final class TestPostgresSlot: Sendable {
    /// How many test databases may be open at once (each with up to 4 connections: a server).
    public static let limit = 12

    private struct State {
        var free = TestPostgresSlot.limit
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private static let state = Mutex(State())

    private init() {}

    /// Waits for a free slot, first come, first served.
    public static func acquire() async -> TestPostgresSlot {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiters.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
        return TestPostgresSlot()
    }

    deinit {
        let next = Self.state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

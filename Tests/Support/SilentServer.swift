import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that accepts connections and never says a word until stopped: a
/// database server whose handshake hangs. It counts what it accepted, so a test knows when its
/// clients are all waiting on it.
public final class SilentServer: Sendable {
    private struct State {
        var accepted: [Int32] = []
        var waiters = CountWaiters()
        var stopped = false
    }

    private let listener: Int32
    /// The bound port (chosen by the kernel).
    public let port: UInt16
    private let state = Mutex(State())

    /// Starts listening on 127.0.0.1 with an ephemeral port.
    public init() throws {
        (listener, port) = try LoopbackListener.open()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Suspends until at least `count` connections have been accepted.
    public func waitForConnections(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { $0.waiters.wait(until: count, count: $0.accepted.count, continuation) }
            if !waiting { continuation.resume() }
        }
    }

    /// Stops accepting and closes every accepted connection, so their clients fail at once;
    /// idempotent.
    public func stop() {
        let connections = state.withLock { state -> [Int32]? in
            guard !state.stopped else { return nil }
            state.stopped = true
            defer { state.accepted = [] }
            return state.accepted
        }
        guard let connections else { return }
        // shutdown wakes the thread blocked in accept(), which then closes the descriptor.
        shutdown(listener, Int32(SHUT_RDWR))
        for connection in connections { close(connection) }
    }

    private func acceptLoop() {
        LoopbackListener.acceptConnections(on: listener) { [self] connection in
            let ready = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                guard !state.stopped else { return nil }
                state.accepted.append(connection)
                return state.waiters.reached(state.accepted.count)
            }
            guard let ready else {
                close(connection)
                return false
            }
            for continuation in ready { continuation.resume() }
            return true
        }
    }
}

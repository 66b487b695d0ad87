import Synchronization

/// Wakes a service that waits for work: `wake()` from whoever queued something, `wait(timeout:)`
/// in the service's loop. A wake while the service is busy is kept, so the next wait returns at
/// once and nothing queued meanwhile waits for the timeout. One waiter at a time.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    init() {}

    /// Wakes the waiting service, or the next one to wait.
    func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns when woken (or a wake came since the last wait), after `timeout`, or when cancelled.
    func wait(timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: timeout) }
            group.addTask { await self.nextWake() }
            await group.next()
            group.cancelAll()
        }
    }

    private func nextWake() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending {
                        state.pending = false
                        return true
                    }
                    // Cancelled before the waiter was stored: the handler found nothing to resume.
                    if Task.isCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}

import Synchronization

/// Tracks dispatched requests from the moment their handler starts until MHD reports the
/// request complete (the response sent or the connection gone), so shutdown can wait for
/// them, and cancel and answer those that outlive the grace period.
///
/// Every request passes through here twice, from several MHD threads at once, so the hot
/// path avoids a single lock: entries live in shards picked by id, the count and the
/// draining flag are atomics, and only shutdown's waiters share one lock.
final class InFlightRegistry: Sendable {
    private struct Waiters {
        var nextID: UInt64 = 0
        var continuations: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    /// Mutex is not copyable, so each shard's lives in its own object.
    private final class Shard: Sendable {
        let entries = Mutex<[UInt64: PendingResponse]>([:])
    }

    private static let shardCount = 16
    private let shards = (0..<shardCount).map { _ in Shard() }
    private let nextID = Atomic<UInt64>(0)
    private let inFlight = Atomic<Int>(0)
    private let draining = Atomic<Bool>(false)
    private let waiters = Mutex(Waiters())

    /// Whether shutdown has begun; new requests are then answered 503 without dispatch.
    var isDraining: Bool { draining.load(ordering: .acquiring) }

    /// Requests dispatched and not yet complete.
    var count: Int { inFlight.load(ordering: .acquiring) }

    /// Records a request about to be dispatched; nil when draining (answer it 503 instead).
    func register(_ pending: PendingResponse) -> UInt64? {
        // Counting first and re-checking the flag after means shutdown, which sets the flag
        // and then reads the count, can never miss a request that went on to be dispatched.
        inFlight.add(1, ordering: .sequentiallyConsistent)
        guard !draining.load(ordering: .sequentiallyConsistent) else {
            finish(nil)
            return nil
        }
        let id = nextID.add(1, ordering: .relaxed).newValue
        shards[Int(id % UInt64(Self.shardCount))].entries.withLock { $0[id] = pending }
        return id
    }

    /// MHD completed the request `id`.
    func finish(_ id: UInt64?) {
        if let id {
            _ = shards[Int(id % UInt64(Self.shardCount))].entries.withLock { $0.removeValue(forKey: id) }
        }
        let remaining = inFlight.subtract(1, ordering: .sequentiallyConsistent).newValue
        if remaining == 0 && draining.load(ordering: .sequentiallyConsistent) {
            wakeWaiters()
        }
    }

    /// Refuse new dispatches from now on.
    func beginDraining() {
        draining.store(true, ordering: .sequentiallyConsistent)
    }

    /// Cancels every handler that has not answered yet and answers it with `respond`.
    func cancelUnanswered(respond: (HTTPRequest) -> HTTPResponse) {
        let pendings = shards.flatMap { shard in shard.entries.withLock { Array($0.values) } }
        for pending in pendings where !pending.isCompleted {
            // Answer first: a handler cancelled first could return (and win) before the 503.
            pending.complete(respond(pending.request))
            pending.cancelHandler()
        }
    }

    /// Waits until no request is in flight or `timeout` passes; true when drained. Only
    /// meaningful once draining, when the count can only fall.
    func waitUntilEmpty(timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.waitUntilEmpty(); return true }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let drained = await group.next() ?? false
            group.cancelAll()
            return drained
        }
    }

    private func wakeWaiters() {
        let continuations = waiters.withLock { waiters in
            defer { waiters.continuations = [:] }
            return Array(waiters.continuations.values)
        }
        for continuation in continuations { continuation.resume() }
    }

    /// Waits until no request is in flight; returns early when the waiting task is cancelled.
    private func waitUntilEmpty() async {
        let id = waiters.withLock { waiters in
            waiters.nextID += 1
            return waiters.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = waiters.withLock { waiters in
                    // Checked under the lock that wakeWaiters takes, after the count reached
                    // zero, so a wake-up cannot slip between the check and the registration.
                    // Cancellation sets its flag before onCancel runs, so a cancellation that
                    // found no waiter to resume is seen here.
                    if count == 0 || Task.isCancelled { return true }
                    waiters.continuations[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            waiters.withLock { $0.continuations.removeValue(forKey: id) }?.resume()
        }
    }
}

import Dispatch
import Synchronization

/// A fixed set of connections, each confined to its own serial `DispatchQueue`, that run the
/// work handed to the pool: SQLite's readers and PostgreSQL's connections.
///
/// Callers hand in work, not borrow connections. Work waits first come, first served, and a
/// connection that finishes one piece takes the next on the same thread; a connection's queue
/// is only woken when the connection was idle. So under load a piece of work costs no thread
/// hop to reach a connection. A pool that lends connections costs two: the waiting borrower's
/// task is resumed, and it then wakes a dispatch thread for the connection's queue (issue #39:
/// a PostgreSQL login took 5.0 context switches that way, 4.0–4.5 this way; its two waits for
/// PostgreSQL's answers are the ones the work itself needs). The blocking calls run on the
/// connections' queues, never on Swift's cooperative pool.
final class ConnectionPool<Connection>: Sendable {
    /// One connection and the queue it lives on.
    ///
    /// `@unchecked Sendable` is safe because `connection` is only touched inside blocks on
    /// `queue` (serial), and a slot is either idle or inside exactly one `drain` (the pool's lock
    /// hands it out once).
    private final class Slot: @unchecked Sendable {
        let queue: DispatchQueue
        let connection: Connection

        init(_ connection: Connection, label: String) {
            self.connection = connection
            self.queue = DispatchQueue(label: label)
        }
    }

    /// One caller's work bound to its continuation, called once: with a connection, or with nil
    /// when the pool closed before any connection took it.
    private typealias Job = @Sendable (Connection?) -> Void

    private struct State {
        var idle: [Slot]
        /// Waiting work, oldest first.
        var jobs: [Job] = []
        var isClosed = false
        /// Pieces of work so far that found every connection at work and waited.
        var waits = 0
        /// Resumed once every slot is idle after `close`.
        var closeWaiter: CheckedContinuation<Void, Never>?
    }

    // What `run` and `drain` decided under the lock, acted on after it is released.
    private enum Submission { case start(Slot), queued, closed }
    private enum DrainStep { case run(Job), idle(closeWaiter: CheckedContinuation<Void, Never>?) }

    private let slots: [Slot]
    private let state: Mutex<State>

    /// `label` names the queues: `label.0`, `label.1`, …
    init(_ connections: [Connection], label: String) {
        slots = connections.enumerated().map { Slot($1, label: "\(label).\($0)") }
        state = Mutex(State(idle: slots))
    }

    /// How many connections the pool keeps.
    var size: Int { slots.count }
    /// Connections at work right now.
    var busyCount: Int { slots.count - state.withLock { $0.idle.count } }
    /// Pieces of work so far that found every connection at work and waited.
    var waits: Int { state.withLock { $0.waits } }

    /// Runs `work` on a connection's queue as soon as one is free, and returns its result.
    /// Fails with `.closed` once the pool is closed.
    func run<T: Sendable>(_ work: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let job: Job = { connection in
                do {
                    guard let connection else { throw StorageError.closed() }
                    continuation.resume(returning: try work(connection))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            // Work for an idle connection goes to it directly, not through the queue: it is
            // that connection's from now on, so `close` lets it run rather than failing it.
            let submission = state.withLock { state -> Submission in
                if state.isClosed { return .closed }
                if let slot = state.idle.popLast() { return .start(slot) }
                state.jobs.append(job)
                state.waits += 1
                return .queued
            }
            switch submission {
            case .start(let slot): slot.queue.async { self.drain(slot, startingWith: job) }
            case .queued: break
            case .closed: job(nil)
            }
        }
    }

    /// Runs `first`, then waiting work on `slot` until none is left, then marks it idle. Runs
    /// on its queue.
    private func drain(_ slot: Slot, startingWith first: Job) {
        var job = first
        while true {
            job(slot.connection)
            let step = state.withLock { state -> DrainStep in
                if !state.jobs.isEmpty { return .run(state.jobs.removeFirst()) }
                state.idle.append(slot)
                guard state.isClosed, state.idle.count == slots.count, let waiter = state.closeWaiter else {
                    return .idle(closeWaiter: nil)
                }
                state.closeWaiter = nil
                return .idle(closeWaiter: waiter)
            }
            switch step {
            case .run(let next):
                job = next
            case .idle(let closeWaiter):
                closeWaiter?.resume()
                return
            }
        }
    }

    /// Refuses new work, fails the work still waiting, waits for the running work, then runs
    /// `closing` on each connection's queue. A second call returns at once.
    func close(_ closing: @escaping @Sendable (Connection) -> Void) async {
        let waiting = state.withLock { state -> [Job]? in
            if state.isClosed { return nil }
            state.isClosed = true
            defer { state.jobs = [] }
            return state.jobs
        }
        guard let waiting else { return }
        for job in waiting { job(nil) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let allIdle = state.withLock { state -> Bool in
                if state.idle.count == slots.count { return true }
                state.closeWaiter = continuation
                return false
            }
            if allIdle { continuation.resume() }
        }
        for slot in slots {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                slot.queue.async {
                    closing(slot.connection)
                    continuation.resume()
                }
            }
        }
    }
}

import Dispatch
import Synchronization

/// A bounded pool of PostgreSQL connections, each confined to its own serial `DispatchQueue`.
///
/// A caller borrows an idle connection, or waits (suspended, not blocking a thread) until one
/// comes back; waiters are served first come, first served. The blocking libpq calls run on
/// the connection's queue, never on Swift's cooperative pool.
final class PostgresPool: Sendable {
    /// One connection and the queue it lives on.
    ///
    /// `@unchecked Sendable` is safe because `connection` is only touched inside blocks on
    /// `queue` (serial), and the pool hands each slot to one borrower at a time.
    final class Slot: @unchecked Sendable {
        let queue: DispatchQueue
        /// Touched only on `queue`.
        var connection: PostgresConnection

        init(_ connection: PostgresConnection, label: String) {
            self.connection = connection
            self.queue = DispatchQueue(label: label)
        }
    }

    private struct State {
        var idle: [Slot]
        var waiters: [CheckedContinuation<Slot, any Error>] = []
        var isClosed = false
        var drainWaiter: CheckedContinuation<[Slot], Never>?
    }

    private let size: Int
    private let state: Mutex<State>

    init(_ connections: [PostgresConnection]) {
        size = connections.count
        state = Mutex(State(idle: connections.enumerated().map { Slot($1, label: "herald.storage.postgres.\($0)") }))
    }

    /// Runs `work` on a borrowed connection's queue and gives the connection back afterwards.
    func withConnection<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let slot = try await borrow()
        defer { giveBack(slot) }
        return try await withCheckedThrowingContinuation { continuation in
            slot.queue.async {
                do {
                    continuation.resume(returning: try work(slot.connection))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    private func borrow() async throws -> Slot {
        try await withCheckedThrowingContinuation { continuation in
            enum Outcome { case ready(Slot), closed, waiting }
            let outcome = state.withLock { state -> Outcome in
                if state.isClosed { return .closed }
                if let slot = state.idle.popLast() { return .ready(slot) }
                state.waiters.append(continuation)
                return .waiting
            }
            switch outcome {
            case .ready(let slot): continuation.resume(returning: slot)
            case .closed: continuation.resume(throwing: StorageError.closed())
            case .waiting: break
            }
        }
    }

    private func giveBack(_ slot: Slot) {
        enum Outcome { case handOver(CheckedContinuation<Slot, any Error>), drained(CheckedContinuation<[Slot], Never>, [Slot]), none }
        let outcome = state.withLock { state -> Outcome in
            if !state.waiters.isEmpty {
                return .handOver(state.waiters.removeFirst())
            }
            state.idle.append(slot)
            if state.isClosed, state.idle.count == size, let drainWaiter = state.drainWaiter {
                state.drainWaiter = nil
                return .drained(drainWaiter, state.idle)
            }
            return .none
        }
        switch outcome {
        case .handOver(let waiter): waiter.resume(returning: slot)
        case .drained(let drainWaiter, let slots): drainWaiter.resume(returning: slots)
        case .none: break
        }
    }

    /// Refuses new work, fails the waiting callers, waits for the running ones, then closes
    /// every connection. A second call returns at once.
    func close() async {
        let slots = await withCheckedContinuation { (continuation: CheckedContinuation<[Slot], Never>) in
            enum Outcome { case closeNow([Slot]), wait, alreadyClosed }
            var failedWaiters: [CheckedContinuation<Slot, any Error>] = []
            let outcome = state.withLock { state -> Outcome in
                if state.isClosed { return .alreadyClosed }
                state.isClosed = true
                failedWaiters = state.waiters
                state.waiters = []
                if state.idle.count == size { return .closeNow(state.idle) }
                state.drainWaiter = continuation
                return .wait
            }
            for waiter in failedWaiters {
                waiter.resume(throwing: StorageError.closed())
            }
            switch outcome {
            case .closeNow(let slots): continuation.resume(returning: slots)
            case .alreadyClosed: continuation.resume(returning: [])
            case .wait: break
            }
        }
        for slot in slots {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                slot.queue.async {
                    slot.connection.close()
                    continuation.resume()
                }
            }
        }
    }
}

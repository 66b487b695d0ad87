import Synchronization

/// A bounded pool of reader connections.
///
/// A read borrows an idle connection, or waits (suspended, not blocking a thread) until one is
/// returned; waiters are served first come, first served. Each borrowed connection is used by
/// exactly one read at a time, and runs it on its own queue.
final class ReaderPool: Sendable {
    private struct State {
        var idle: [ConfinedConnection]
        var waiters: [CheckedContinuation<ConfinedConnection, any Error>] = []
        var isClosed = false
        /// Resumed with all connections once every borrowed one has come back after `close()`.
        var drainWaiter: CheckedContinuation<[ConfinedConnection], Never>?
    }

    private let size: Int
    private let state: Mutex<State>

    init(_ connections: [ConfinedConnection]) {
        size = connections.count
        state = Mutex(State(idle: connections))
    }

    /// Runs `work` on a borrowed reader and gives the reader back afterwards.
    func withReader<T: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        let reader = try await borrow()
        defer { giveBack(reader) }
        return try await reader.run(work)
    }

    private func borrow() async throws -> ConfinedConnection {
        try await withCheckedThrowingContinuation { continuation in
            enum Outcome { case ready(ConfinedConnection), closed, waiting }
            let outcome = state.withLock { state -> Outcome in
                if state.isClosed { return .closed }
                if let reader = state.idle.popLast() { return .ready(reader) }
                state.waiters.append(continuation)
                return .waiting
            }
            // Resume outside the lock, keeping the critical section to bookkeeping.
            switch outcome {
            case .ready(let reader): continuation.resume(returning: reader)
            case .closed: continuation.resume(throwing: StorageError.closed())
            case .waiting: break
            }
        }
    }

    private func giveBack(_ reader: ConfinedConnection) {
        enum Outcome { case handOver(CheckedContinuation<ConfinedConnection, any Error>), drained(CheckedContinuation<[ConfinedConnection], Never>, [ConfinedConnection]), none }
        let outcome = state.withLock { state -> Outcome in
            if !state.waiters.isEmpty {
                return .handOver(state.waiters.removeFirst())
            }
            state.idle.append(reader)
            if state.isClosed, state.idle.count == size, let drainWaiter = state.drainWaiter {
                state.drainWaiter = nil
                return .drained(drainWaiter, state.idle)
            }
            return .none
        }
        switch outcome {
        case .handOver(let waiter): waiter.resume(returning: reader)
        case .drained(let drainWaiter, let readers): drainWaiter.resume(returning: readers)
        case .none: break
        }
    }

    /// Refuses new reads, fails the waiting ones, waits for the running ones, then closes
    /// every reader connection. A second call returns at once.
    func close() async {
        let readers = await withCheckedContinuation { (continuation: CheckedContinuation<[ConfinedConnection], Never>) in
            enum Outcome { case closeNow([ConfinedConnection]), wait, alreadyClosed }
            var failedWaiters: [CheckedContinuation<ConfinedConnection, any Error>] = []
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
            case .closeNow(let readers): continuation.resume(returning: readers)
            case .alreadyClosed: continuation.resume(returning: [])
            case .wait: break
            }
        }
        for reader in readers {
            await reader.close()
        }
    }
}

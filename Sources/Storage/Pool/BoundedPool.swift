import Synchronization

/// A fixed set of members (connections) lent to one borrower at a time.
///
/// A borrower takes an idle member, or waits — suspended, not blocking a thread — until one
/// comes back; waiters are served first come, first served. `drain()` refuses new borrowers,
/// fails the waiting ones and returns every member once all have come back, so the owner can
/// close them. Shared by SQLite's reader pool and PostgreSQL's connection pool.
final class BoundedPool<Member: Sendable>: Sendable {
    private struct State {
        var idle: [Member]
        var waiters: [CheckedContinuation<Member, any Error>] = []
        var isClosed = false
        /// Resumed with all members once every borrowed one has come back after `drain()`.
        var drainWaiter: CheckedContinuation<[Member], Never>?
    }

    // What each operation decided under the lock, acted on after it is released.
    private enum BorrowOutcome { case ready(Member), closed, waiting }
    private enum ReturnOutcome {
        case handOver(CheckedContinuation<Member, any Error>)
        case drained(CheckedContinuation<[Member], Never>, [Member])
        case none
    }
    private enum DrainOutcome { case closeNow([Member]), wait, alreadyClosed }

    /// How many members the pool lends.
    let size: Int
    private let state: Mutex<State>
    private let waitCount = Atomic<Int>(0)

    init(_ members: [Member]) {
        size = members.count
        state = Mutex(State(idle: members))
    }

    /// Borrows so far that found every member lent and waited for one.
    var waits: Int { waitCount.load(ordering: .relaxed) }

    /// Members lent right now.
    var lentCount: Int { state.withLock { size - $0.idle.count } }

    /// An idle member, waiting for one when all are lent; throws once the pool is drained.
    func borrow() async throws -> Member {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> BorrowOutcome in
                if state.isClosed { return .closed }
                if let member = state.idle.popLast() { return .ready(member) }
                state.waiters.append(continuation)
                return .waiting
            }
            // Resume outside the lock, keeping the critical section to bookkeeping.
            switch outcome {
            case .ready(let member): continuation.resume(returning: member)
            case .closed: continuation.resume(throwing: StorageError.closed())
            case .waiting: waitCount.add(1, ordering: .relaxed)
            }
        }
    }

    /// Returns a borrowed member: straight to the longest waiter, else to the idle set.
    func giveBack(_ member: Member) {
        let outcome = state.withLock { state -> ReturnOutcome in
            if !state.waiters.isEmpty {
                return .handOver(state.waiters.removeFirst())
            }
            state.idle.append(member)
            if state.isClosed, state.idle.count == size, let drainWaiter = state.drainWaiter {
                state.drainWaiter = nil
                return .drained(drainWaiter, state.idle)
            }
            return .none
        }
        switch outcome {
        case .handOver(let waiter): waiter.resume(returning: member)
        case .drained(let drainWaiter, let members): drainWaiter.resume(returning: members)
        case .none: break
        }
    }

    /// Refuses new borrowers, fails the waiting ones, waits for the lent ones, and returns every
    /// member for closing. A second call returns an empty array at once.
    func drain() async -> [Member] {
        await withCheckedContinuation { (continuation: CheckedContinuation<[Member], Never>) in
            var failedWaiters: [CheckedContinuation<Member, any Error>] = []
            let outcome = state.withLock { state -> DrainOutcome in
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
            case .closeNow(let members): continuation.resume(returning: members)
            case .alreadyClosed: continuation.resume(returning: [])
            case .wait: break
            }
        }
    }
}

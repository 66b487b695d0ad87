import Dispatch

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

    private let pool: BoundedPool<Slot>

    init(_ connections: [PostgresConnection]) {
        pool = BoundedPool(connections.enumerated().map { Slot($1, label: "herald.storage.postgres.\($0)") })
    }

    /// The pool's size, connections lent now and waits so far.
    var usage: PostgresPoolUsage {
        PostgresPoolUsage(size: pool.size, inUse: pool.lentCount, waits: pool.waits)
    }

    /// Runs `work` on a borrowed connection's queue and gives the connection back afterwards.
    func withConnection<T: Sendable>(_ work: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let slot = try await pool.borrow()
        defer { pool.giveBack(slot) }
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

    /// Refuses new work, fails the waiting callers, waits for the running ones, then closes
    /// every connection. A second call returns at once.
    func close() async {
        let slots = await pool.drain()
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

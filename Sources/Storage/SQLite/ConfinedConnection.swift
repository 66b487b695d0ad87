import Dispatch

/// A connection confined to its own serial `DispatchQueue`: every use runs on that queue, so
/// the `SQLITE_OPEN_NOMUTEX` connection is only ever touched by one thread at a time, and the
/// blocking SQLite calls run on a Dispatch thread, not on Swift's cooperative pool.
///
/// `@unchecked Sendable` is safe because the only mutable state, `connection`, is read and
/// written exclusively inside blocks on `queue` (which is serial); the queue itself is Sendable.
final class ConfinedConnection: @unchecked Sendable {
    private let queue: DispatchQueue
    /// Touched only on `queue`; nil after `close()`.
    private var connection: SQLiteConnection?

    init(_ connection: SQLiteConnection, label: String) {
        self.connection = connection
        self.queue = DispatchQueue(label: label)
    }

    /// Runs `work` on the queue with the connection and returns its result. Work runs in the
    /// order it was submitted.
    func run<T: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                do {
                    guard let connection = self.connection else { throw StorageError.closed() }
                    continuation.resume(returning: try work(connection))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Queues `work` without waiting for it; it gets nil once the connection is closed.
    func submit(_ work: @escaping @Sendable (SQLiteConnection?) -> Void) {
        queue.async { work(self.connection) }
    }

    /// Closes the connection after the work already queued has finished.
    func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                self.connection?.close()
                self.connection = nil
                continuation.resume()
            }
        }
    }
}

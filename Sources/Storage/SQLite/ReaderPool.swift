/// A bounded pool of reader connections.
///
/// A read borrows an idle connection, or waits (suspended, not blocking a thread) until one is
/// returned; waiters are served first come, first served. Each borrowed connection is used by
/// exactly one read at a time, and runs it on its own queue.
final class ReaderPool: Sendable {
    private let pool: BoundedPool<ConfinedConnection>

    init(_ connections: [ConfinedConnection]) {
        pool = BoundedPool(connections)
    }

    /// Runs `work` on a borrowed reader and gives the reader back afterwards.
    func withReader<T: Sendable>(_ work: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        let reader = try await pool.borrow()
        defer { pool.giveBack(reader) }
        return try await reader.run(work)
    }

    /// Refuses new reads, fails the waiting ones, waits for the running ones, then closes
    /// every reader connection. A second call returns at once.
    func close() async {
        for reader in await pool.drain() {
            await reader.close()
        }
    }
}

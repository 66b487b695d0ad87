import Synchronization

/// The single writer connection, with group commit.
///
/// Every write runs on the writer's serial queue, one body after another, as before; but the
/// writes that queue up while a transaction commits are then run together in ONE transaction
/// and share one COMMIT. With `synchronous=FULL` a commit costs an fsync of the WAL, so under
/// concurrent load many writes share that cost instead of waiting for one sync each. A lone
/// write runs in its own transaction, so an idle server pays nothing extra, and no write ever
/// waits to form a batch.
///
/// Durability is unchanged: a caller resumes only after the COMMIT that holds its changes
/// succeeded. A body that throws is undone alone (the shared transaction runs again with a
/// savepoint around each body, see `SQLiteConnection.groupTransaction`); when the shared
/// transaction fails as a whole, every body of it runs again in a transaction of its own
/// (bodies may run more than once, see `Database.write`).
final class SQLiteWriter: Sendable {
    /// At most this many writes share a commit, which bounds how long the last one waits.
    static let maximumBatch = 64

    private let connection: ConfinedConnection
    /// Internal, not private: checkpoint tests wait for its passes.
    let checkpointer: SQLiteCheckpointer
    private let state = Mutex(State())
    /// Writes per commit, for `/metrics` (internal: `SQLiteDatabase` publishes it).
    let batches = SQLiteCommitBatches()

    private struct State {
        var queued: [PendingWrite] = []
        /// Whether a drain is scheduled or running on the connection's queue.
        var isDraining = false
    }

    init(_ connection: ConfinedConnection, checkpointer: SQLiteCheckpointer) {
        self.connection = connection
        self.checkpointer = checkpointer
    }

    /// Runs `body` in a write transaction (possibly shared, see above) and returns its result
    /// once that transaction committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let startsDrain = state.withLock { state in
                state.queued.append(PendingWrite(body, continuation))
                defer { state.isDraining = true }
                return !state.isDraining
            }
            if startsDrain {
                connection.submit { [self] connection in drain(connection) }
            }
        }
    }

    /// Transactions committed so far (a shared one counts once).
    var commitCount: Int { batches.snapshot.commits }

    /// Savepoints the writer has opened, and write transactions it ran again with savepoints
    /// after an optimistic attempt (`SQLiteConnection.SavepointMode`), for tests.
    func savepointCounts() async throws -> (opened: Int, replays: Int) {
        try await connection.run { ($0.savepointsOpened, $0.replays) }
    }

    /// Writes waiting for the writer (not counting the one running).
    var queuedCount: Int { state.withLock { $0.queued.count } }

    /// Closes the connection after the writes already queued have finished (the checkpointer
    /// first, so the writer's is the last connection, which checkpoints and removes the WAL).
    func close() async {
        await checkpointer.close()
        await connection.close()
    }

    /// On the connection's queue: commits batches until nothing is queued.
    private func drain(_ connection: SQLiteConnection?) {
        while let batch = nextBatch() {
            guard let connection else {
                for write in batch { write.fail(StorageError.closed()) }
                continue
            }
            if batch.count > 1, let results = connection.groupTransaction(batch.map(\.run)) {
                batches.record(batch.count)
                for (write, result) in zip(batch, results) {
                    switch result {
                    case .success(let deliver): deliver()
                    case .failure(let error): write.fail(error)
                    }
                }
            } else {
                for write in batch {
                    do {
                        let deliver = try connection.transaction(.immediate, write.run)
                        batches.record(1)
                        deliver()
                    } catch {
                        write.fail(error)
                    }
                }
            }
            checkpointer.afterCommit(connection)
        }
    }

    private func nextBatch() -> [PendingWrite]? {
        state.withLock { state in
            guard !state.queued.isEmpty else {
                state.isDraining = false
                return nil
            }
            let batch = Array(state.queued.prefix(Self.maximumBatch))
            state.queued.removeFirst(batch.count)
            return batch
        }
    }
}

/// A queued write: its body, and how to resume its caller.
private struct PendingWrite: Sendable {
    /// Runs the body; returns how to deliver its value, called once the transaction committed.
    let run: @Sendable (any SQLExecutor) throws -> @Sendable () -> Void
    let fail: @Sendable (any Error) -> Void

    init<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) throws -> T,
                      _ continuation: CheckedContinuation<T, any Error>) {
        run = { executor in
            let value = try body(executor)
            return { continuation.resume(returning: value) }
        }
        fail = { continuation.resume(throwing: $0) }
    }
}

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The SQLite implementation of `Database`: one file, one writer connection, a small pool of
/// reader connections.
///
/// Concurrency model:
/// - **One writer.** Exactly one connection writes. It is confined to one serial
///   `DispatchQueue`, so `write` bodies run one after another in `BEGIN IMMEDIATE`
///   transactions; concurrent callers simply queue up, and SQLite never sees two writers from
///   this process (other processes, such as `herald migrate`, wait up to the busy timeout).
///   Writes that queued up during a commit share the next one (group commit, `SQLiteWriter`).
/// - **A pool of readers** (`readerCount`, default 2, `ConnectionPool`). A `read` runs its
///   body on an idle reader's own serial queue (or waits, suspended, for one), inside a
///   deferred transaction: the body sees one WAL snapshot of committed data, and is never
///   blocked by the writer.
/// - **Off the cooperative pool.** Bodies are synchronous and run on Dispatch threads;
///   `read`/`write` suspend with a continuation until they finish, so blocking SQLite calls
///   never occupy one of Swift's few cooperative threads.
/// - **No shared connections.** Every connection is opened with `SQLITE_OPEN_NOMUTEX` and is
///   used by one thread at a time because it lives on its own serial queue.
/// - **Checkpoints beside the writer.** A connection of its own copies the WAL back into the
///   database file while the writer goes on committing (`SQLiteCheckpointer`).
///
/// Settings: WAL journal, `synchronous=FULL` (a write is on disk when `write` returns),
/// `foreign_keys=ON`, a 5 s busy timeout, and statements prepared once per connection and
/// reused. Opening happens synchronously in `init`, once at start-up.
public final class SQLiteDatabase: Database {
    /// The file path the database was opened with.
    public let path: String
    /// Internal, not private: group-commit tests look at its commit count and queue.
    let writer: SQLiteWriter
    private let readers: ConnectionPool<SQLiteConnection>
    private let now: @Sendable () -> Date

    /// Opens (creating if needed) the database file at `path`. The parent directory must
    /// exist; an unopenable file fails with `.io`, a file that is not a database with `.corrupt`.
    /// `now` stamps `schema_migrations.applied_at`.
    /// `checkpointThreshold` is the WAL length, in pages, at which it is copied back into the
    /// database file (`SQLiteCheckpointer`); 1,000 is SQLite's own `wal_autocheckpoint`. A longer
    /// WAL writes fewer bytes (a checkpoint copies each page once however often the WAL holds
    /// it) but each pass is a larger burst that the writer's syncs wait behind. Measured on the
    /// returning-login bench (issue #39): 25.6 KB written per login and an open-loop p99 at 50 %
    /// load of 8.3 ms at 1,000; 21.3 KB and 10.5 ms at 3,000; 18.5 KB and 20.0 ms at 10,000.
    /// Latency is what a user sees, so it stays 1,000.
    public init(path: String, readerCount: Int = 2, checkpointThreshold: Int = 1_000,
                now: @escaping @Sendable () -> Date) throws(StorageError) {
        guard readerCount >= 1 else {
            throw StorageError(code: .unsupported, message: "readerCount must be at least 1 (got \(readerCount))")
        }
        guard checkpointThreshold >= 1 else {
            throw StorageError(code: .unsupported, message: "checkpointThreshold must be at least 1 (got \(checkpointThreshold))")
        }
        self.path = path
        self.now = now
        Self.createOwnerOnly(path)
        // The writer goes first: it creates the file and switches it to WAL, which readers rely on.
        let writerConnection = try SQLiteConnection(path: path, role: .writer)
        var readerConnections: [SQLiteConnection] = []
        for _ in 0..<readerCount {
            readerConnections.append(try SQLiteConnection(path: path, role: .reader))
        }
        let checkpointer = SQLiteCheckpointer(
            ConfinedConnection(try SQLiteConnection(path: path, role: .checkpointer), label: "herald.storage.checkpointer"),
            threshold: checkpointThreshold)
        writer = SQLiteWriter(ConfinedConnection(writerConnection, label: "herald.storage.writer"), checkpointer: checkpointer)
        readers = ConnectionPool(readerConnections, label: "herald.storage.reader")
    }

    /// Creates a missing database file with mode 0600 before SQLite opens it: SQLite would
    /// create it 0644 (less the umask), and it gives the WAL and shared-memory files the mode
    /// of the database file, so the sessions, hashes and sealed keys in all three stay
    /// unreadable to other local users. An existing file keeps the mode its operator chose;
    /// when creating fails, SQLite's own open reports why.
    static func createOwnerOnly(_ path: String) {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else { return }
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
    }

    /// Writes per commit so far (`herald_sqlite_commit_batch_size`).
    public var commitBatches: SQLiteCommitBatches { writer.batches }

    /// Runs body on a reader connection (snapshot), off the Swift concurrency pool.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await readers.run { connection in
            try connection.transaction(.deferred, body)
        }
    }

    /// Runs body in one write transaction (BEGIN IMMEDIATE on the single writer, possibly shared
    /// with other writes queued at the same time); returns once its changes are committed, rolls
    /// back its changes when it throws (the error is rethrown unchanged).
    /// `isolation` changes nothing here: the single writer runs one body at a time.
    @discardableResult
    public func write<T: Sendable>(isolation: WriteIsolation,
                                   _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await writer.write(body)
    }

    /// Applies the migrations not yet recorded, in (module registration order, version) order,
    /// each in its own write transaction; already-applied ones are checked by name and skipped.
    public func migrate(_ migrations: [Migration]) async throws {
        let plan = try MigrationPlan(migrations)
        try await write { executor in
            try executor.execute(MigrationPlan.createTableSQL, [])
            try plan.checkNoUnknownVersions(in: executor)
        }
        for step in plan.steps {
            let appliedAt = now().unixSeconds
            _ = try await write { executor in
                try MigrationPlan.apply(step, on: executor, appliedAt: appliedAt)
            }
        }
    }

    /// Lets queued writes and running reads finish, fails waiting reads, then finalizes every
    /// statement and closes every connection. Later calls throw; a second close does nothing.
    public func close() async {
        await readers.close { $0.close() }
        // Closed last, the writer checkpoints the WAL into the main file.
        await writer.close()
    }
}

import CSQLite

/// One SQLite connection (`sqlite3*`), its settings and its prepared-statement cache.
///
/// Not thread-safe by design: it is opened with `SQLITE_OPEN_NOMUTEX` and used by one thread
/// at a time, which `ConfinedConnection` (the writer, the checkpointer) and `ConnectionPool` (the
/// readers) guarantee by running every use on the connection's serial queue.
/// Owns the handle and the cached statements; `close()` (or `deinit`) frees both.
final class SQLiteConnection {
    /// The writer creates the file and sets database-wide modes; readers refuse to write; the
    /// checkpointer only copies the WAL back into the database file (`SQLiteCheckpointer`).
    enum Role {
        case writer
        case reader
        case checkpointer
    }

    /// How a transaction starts.
    enum TransactionKind {
        /// Takes the write lock up front, so the body never fails half-way with SQLITE_BUSY
        /// when it upgrades from reading to writing.
        case immediate
        /// Starts a read snapshot at the first SELECT; every query in the body sees that snapshot.
        case deferred

        var beginSQL: String {
            switch self {
            case .immediate: "BEGIN IMMEDIATE"
            case .deferred: "BEGIN DEFERRED"
            }
        }
    }

    /// How long a connection waits for a lock held by another connection or process before
    /// failing with `.busy`.
    static let busyTimeoutMilliseconds: Int32 = 5_000
    /// Callers use fixed SQL strings, so the cache stays small; the limit only guards against
    /// SQL built dynamically (e.g. `IN (?, ?, …)` lists of varying length).
    static let statementCacheLimit = 256

    private var handle: OpaquePointer?
    private var statements: [String: SQLiteStatement] = [:]
    /// The writer's WAL length in frames (pages) after its last commit, kept by its WAL hook.
    private(set) var walFrameCount = 0

    /// Number of cached prepared statements (for tests).
    var cachedStatementCount: Int { statements.count }

    /// Opens `path` and applies the settings for `role`.
    init(path: String, role: Role) throws(StorageError) {
        var connection: OpaquePointer?
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        if role == .writer { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &connection, flags, nil)
        guard rc == SQLITE_OK, let connection else {
            let reason = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
                ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(connection)  // SQLite may allocate a handle even when opening fails.
            throw StorageError(code: .io, resultCode: rc, message: "cannot open the SQLite database at '\(path)': \(reason)")
        }
        handle = connection
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, Self.busyTimeoutMilliseconds)
        do {
            try configure(role)
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    private func configure(_ role: Role) throws(StorageError) {
        switch role {
        case .writer:
            // WAL lets readers keep reading a committed snapshot while the writer writes.
            let mode = try runOnce("PRAGMA journal_mode = WAL").first?.values.first
            guard mode == .text("wal") else {
                throw StorageError(code: .unsupported, sql: "PRAGMA journal_mode = WAL",
                                   message: "SQLite refused WAL mode for this file (journal mode is \(mode.map(String.init(describing:)) ?? "unknown"))")
            }
            // In WAL mode NORMAL only syncs at checkpoints: a power loss can drop transactions
            // that already committed, i.e. after the client got its tokens. FULL syncs the WAL
            // on every commit, so a write is durable by the time the response is sent — a lost
            // refresh-token rotation or consumed code would otherwise resurrect or break grants.
            _ = try runOnce("PRAGMA synchronous = FULL")
            _ = try runOnce("PRAGMA foreign_keys = ON")
            // Savepoints (a write replayed with them, see `SavepointMode`) and statements that
            // may fail half-way journal the pages they change in a sub-journal, by default a
            // temporary file opened and written per transaction. It is never needed after the
            // transaction ends — crash recovery is the WAL's job — so it is kept in memory: a
            // few pages per transaction.
            _ = try runOnce("PRAGMA temp_store = MEMORY")
            // Replaces SQLite's automatic checkpoint (itself a WAL hook), which ran on this
            // connection after the commit that crossed 1,000 frames, and held every queued
            // write for the copy and the sync of the database file. `SQLiteCheckpointer` does
            // that on its own connection; the hook only records the WAL's length for it. The
            // context is this object unretained: the handle, and with it the hook, is closed
            // before the object goes away.
            sqlite3_wal_hook(handle, { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<SQLiteConnection>.fromOpaque(context).takeUnretainedValue().walFrameCount = Int(frames)
                return SQLITE_OK
            }, Unmanaged.passUnretained(self).toOpaque())
        case .checkpointer:
            // A checkpoint syncs the WAL before copying it and the database file after; FULL
            // (the writer's level) keeps it that way whatever SQLite was built with.
            _ = try runOnce("PRAGMA synchronous = FULL")
        case .reader:
            _ = try runOnce("PRAGMA foreign_keys = ON")
            // Readers run in deferred transactions and must never take the write lock: that
            // would race the single writer and surface as SQLITE_BUSY.
            _ = try runOnce("PRAGMA query_only = ON")
        }
    }

    /// Copies as much of the WAL into the database file as no reader still needs, without
    /// waiting for any lock (SQLITE_CHECKPOINT_PASSIVE); once all of it is copied, the next
    /// write starts the WAL over from the beginning. Best effort: a checkpoint that cannot run
    /// now (another process holds the checkpoint lock, an I/O error) leaves the WAL as it is,
    /// and the committed data in it stays valid; the next one tries again.
    func checkpoint() {
        guard let handle else { return }
        sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
    }

    /// Runs setup SQL without caching its statement.
    private func runOnce(_ sql: String) throws(StorageError) -> [Row] {
        guard let handle else { throw StorageError.closed(sql: sql) }
        return try SQLiteStatement(sql: sql, connection: handle).query([])
    }

    /// Runs one statement and returns the rows changed.
    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int {
        try statement(for: sql).execute(parameters)
    }

    /// Runs one statement and returns its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [Row] {
        try statement(for: sql).query(parameters)
    }

    /// The cached statement for `sql`, prepared on first use.
    private func statement(for sql: String) throws(StorageError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        guard let handle else { throw StorageError.closed(sql: sql) }
        let statement = try SQLiteStatement(sql: sql, connection: handle)
        if statements.count >= Self.statementCacheLimit {
            statements.removeAll()
        }
        statements[sql] = statement
        return statement
    }

    /// How `SQLExecutor.withSavepoint` runs in the write transaction under way.
    ///
    /// A savepoint makes SQLite copy each page a body changes into its sub-journal, to be able
    /// to undo it; a shared commit put one around every write and a login one more around its
    /// account and session: about 30 µs of a returning login's 300–480 on the 2-core bench
    /// machine, for an undo the success path never uses. So a write transaction first runs
    /// `.optimistic`: no savepoint at all. A `withSavepoint` body that throws marks it
    /// (`needsReplay`); it is rolled back as a whole and runs once more `.real`, with a savepoint
    /// around each `withSavepoint` body and, when shared, around each write. Bodies may run
    /// more than once by contract (`Database.write`), so only failure paths pay for this, as on
    /// PostgreSQL (`PostgresConnection.WriteMode`).
    enum SavepointMode {
        case real, optimistic
    }

    /// Set while a write body runs (see `SavepointMode`).
    private var savepointMode = SavepointMode.real
    /// Set when a `withSavepoint` body threw in an optimistic attempt.
    private var needsReplay = false
    /// After a shared optimistic transaction had to be replayed, this many more shared
    /// transactions run with savepoints at once: a steady stream of refused writes (an expired
    /// session's refresh) would otherwise make every batch run twice.
    static let realGroupsAfterReplay = 32
    private var realGroupsLeft = 0
    /// Savepoints opened (`SAVEPOINT` run), and write transactions replayed with them, for tests.
    private(set) var savepointsOpened = 0
    private(set) var replays = 0

    /// The optimistic attempt would have needed a savepoint; everything was rolled back.
    private struct ReplayWithSavepoints: Error {}

    /// Runs `body` in a transaction: commits when it returns, rolls back and rethrows its error
    /// unchanged when it throws. A write transaction runs optimistically first (`SavepointMode`).
    func transaction<T>(_ kind: TransactionKind, _ body: (any SQLExecutor) throws -> T) throws -> T {
        guard kind == .immediate else { return try attempt(kind, .real, body) }
        do {
            return try attempt(kind, .optimistic, body)
        } catch is ReplayWithSavepoints {
            replays += 1
            return try attempt(kind, .real, body)
        }
    }

    private func attempt<T>(_ kind: TransactionKind, _ mode: SavepointMode,
                            _ body: (any SQLExecutor) throws -> T) throws -> T {
        try execute(kind.beginSQL, [])
        savepointMode = mode
        needsReplay = false
        defer { savepointMode = .real }
        let result: T
        do {
            result = try body(SQLiteExecutor(connection: self))
        } catch {
            rollback()
            if needsReplay { throw ReplayWithSavepoints() }
            throw error
        }
        if needsReplay {
            // The body caught what its savepoint body threw and went on: that body's changes
            // are still here.
            rollback()
            throw ReplayWithSavepoints()
        }
        guard isInTransaction else {
            // The body ended the transaction itself (COMMIT/ROLLBACK), or SQLite rolled it back
            // after an error the body swallowed: committing now would hide a partial change.
            throw StorageError(code: .other, message: "the transaction ended inside the body; do not run BEGIN/COMMIT/ROLLBACK in a transaction body")
        }
        do {
            try execute("COMMIT", [])
        } catch {
            rollback()
            throw error
        }
        return result
    }

    /// `SQLExecutor.withSavepoint` on this connection (see `SavepointMode`).
    func withSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        guard savepointMode == .real else {
            do {
                return try body()
            } catch {
                needsReplay = true
                throw error
            }
        }
        savepointsOpened += 1
        return try SQLiteExecutor(connection: self).withRealSavepoint(name, body)
    }

    /// Group commit: runs several write bodies in one transaction, so they share one COMMIT and
    /// one sync of the WAL. A body that throws undoes only its own changes and gets its error;
    /// the others go on, each seeing what the bodies before it wrote, exactly as if they had run
    /// one after another. The bodies first run optimistically, without savepoints; when one
    /// throws or needs a savepoint, all is rolled back and they run again, each in its own
    /// savepoint (`SavepointMode`).
    ///
    /// Returns one result per body, or nil when the transaction as a whole failed (SQLite
    /// rolled it back after an error, or COMMIT failed): then nothing is committed and the
    /// caller runs each body again on its own. Bodies must not run BEGIN/COMMIT/ROLLBACK.
    func groupTransaction<R>(_ bodies: [(any SQLExecutor) throws -> R]) -> [Result<R, any Error>]? {
        if realGroupsLeft > 0 {
            realGroupsLeft -= 1
        } else if let results = optimisticGroup(bodies) {
            return results
        } else {
            replays += 1
            realGroupsLeft = Self.realGroupsAfterReplay
        }
        return groupWithSavepoints(bodies)
    }

    /// Every body in one transaction without savepoints; nil, with everything rolled back, as
    /// soon as one throws or needs a savepoint, or the transaction fails.
    private func optimisticGroup<R>(_ bodies: [(any SQLExecutor) throws -> R]) -> [Result<R, any Error>]? {
        defer { savepointMode = .real }
        do {
            try execute(TransactionKind.immediate.beginSQL, [])
            savepointMode = .optimistic
            needsReplay = false
            var results: [Result<R, any Error>] = []
            results.reserveCapacity(bodies.count)
            for body in bodies {
                let value = try body(SQLiteExecutor(connection: self))
                guard !needsReplay, isInTransaction else {
                    rollback()
                    return nil
                }
                results.append(.success(value))
            }
            try execute("COMMIT", [])
            return results
        } catch {
            rollback()
            return nil
        }
    }

    /// Every body in one transaction, each in its own savepoint, so one that throws is undone
    /// alone and gets its error while the others commit.
    private func groupWithSavepoints<R>(_ bodies: [(any SQLExecutor) throws -> R]) -> [Result<R, any Error>]? {
        do {
            try execute(TransactionKind.immediate.beginSQL, [])
            var results: [Result<R, any Error>] = []
            results.reserveCapacity(bodies.count)
            for body in bodies {
                savepointsOpened += 1
                try execute("SAVEPOINT herald_write", [])
                do {
                    let value = try body(SQLiteExecutor(connection: self))
                    guard isInTransaction else { return nil }
                    try execute("RELEASE herald_write", [])
                    results.append(.success(value))
                } catch {
                    guard isInTransaction else { return nil }
                    try execute("ROLLBACK TO herald_write", [])
                    try execute("RELEASE herald_write", [])
                    results.append(.failure(error))
                }
            }
            try execute("COMMIT", [])
            return results
        } catch {
            rollback()
            return nil
        }
    }

    private var isInTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Best effort: the caller is already reporting the error that caused the rollback.
    private func rollback() {
        guard isInTransaction else { return }
        _ = try? execute("ROLLBACK", [])
    }

    /// Finalizes every statement, then closes the handle.
    func close() {
        statements.removeAll()  // Each SQLiteStatement finalizes itself in deinit.
        if let handle {
            sqlite3_close_v2(handle)
            self.handle = nil
        }
    }
}

/// The `SQLExecutor` a transaction body receives: a thin view of the connection, valid only
/// on the connection's thread during the body.
struct SQLiteExecutor: SQLExecutor {
    let connection: SQLiteConnection

    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int {
        try connection.execute(sql, parameters)
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [Row] {
        try connection.query(sql, parameters)
    }

    func withSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        try connection.withSavepoint(name, body)
    }
}

@available(*, unavailable, message: "use the executor only inside its read/write body")
extension SQLiteExecutor: Sendable {}

@available(*, unavailable, message: "a connection is confined to its queue; use ConfinedConnection or ConnectionPool")
extension SQLiteConnection: Sendable {}

/// A store that runs SQL transactions: SQLite (`SQLiteDatabase`) or PostgreSQL (`PostgresDatabase`).
///
/// Bodies are synchronous closures that run on a thread owned by the database, never on
/// Swift's cooperative pool, so blocking database calls do not starve other tasks. A body
/// runs to completion once started, even if the calling task is cancelled. Keep bodies short
/// and free of waiting on anything else (network, other tasks): a write body holds the one
/// writer for its whole duration.
///
/// ```swift
/// let id = try await database.write { db in
///     try db.queryOne("INSERT INTO realm (name) VALUES (?) RETURNING id", .text(name))?.int("id")
/// }
/// ```
///
/// SQL that must also run on PostgreSQL: `?` placeholders, `RETURNING`, `ON CONFLICT … DO
/// UPDATE/NOTHING`, INTEGER/BIGINT for integers, times as Int64 unix seconds, booleans as
/// INTEGER 0/1, bytes as BLOB (`PostgresDialect` lists the rewrites PostgreSQL gets). Each module owns its tables and registers its own
/// `Migration`s (module name, versions 1, 2, …); the server passes all of them to `migrate`
/// once at start.
public protocol Database: Sendable {
    /// Runs body on a reader connection (snapshot), off the Swift concurrency pool.
    func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T
    /// Runs body in one write transaction (SQLite: BEGIN IMMEDIATE on the single writer); commits
    /// when body returns, rolls back when it throws (the error is rethrown unchanged).
    /// A body may run more than once — PostgreSQL retries serialization failures, SQLite re-runs
    /// a body alone when the group commit it shared failed — so it must have no effects outside
    /// the database besides its return value.
    @discardableResult
    func write<T: Sendable>(isolation: WriteIsolation,
                            _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T
    /// The same write, for a body that can tell afterwards whether it committed. When the
    /// connection is lost after COMMIT was sent (a failover, a switchover), the outcome is
    /// unknown; instead of failing with `.unavailable`, the database then reconnects, waits
    /// until the lost session has ended, and runs `lostCommitCheck` with the body's return
    /// value in a fresh read: `true` (the rows that value names exist) returns the value as if
    /// the COMMIT had been answered, `false` runs the body again. Only after the reconnect
    /// deadline does the call fail with `.unavailable`. A check reads what only this attempt
    /// could have written (a session id, a token hash it generated), never what a concurrent
    /// write may have written too. Stores whose commits cannot be lost (SQLite) never call it.
    @discardableResult
    func write<T: Sendable>(isolation: WriteIsolation, lostCommitCheck: @escaping LostCommitCheck<T>,
                            _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T
    /// Applies the migrations not yet recorded, per (module, version), in order, each in its own transaction.
    func migrate(_ migrations: [Migration]) async throws
    /// True when the database answers a trivial query (for /readyz).
    func isReachable() async -> Bool
    /// Finishes queued work, then releases every connection; later calls fail.
    func close() async
}

/// Whether a write whose COMMIT went unanswered committed, given what its body returned: reads
/// the rows only that attempt wrote (see `Database.write(isolation:lostCommitCheck:_:)`).
public typealias LostCommitCheck<T> = @Sendable (T, any SQLExecutor) throws -> Bool

extension Database {
    /// A store whose commits are answered or fail as a whole (SQLite) never needs the check.
    @discardableResult
    public func write<T: Sendable>(isolation: WriteIsolation, lostCommitCheck: @escaping LostCommitCheck<T>,
                                   _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await write(isolation: isolation, body)
    }

    /// A write with the default isolation, `.serializable`.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await write(isolation: .serializable, body)
    }

    /// True when a read answers `SELECT 1` (PostgreSQL re-connects, with its 2 s connect
    /// timeout, when the server came back).
    public func isReachable() async -> Bool {
        do {
            let rows = try await read { try $0.query("SELECT 1 AS one", []) }
            return rows.first?["one"] == .integer(1)
        } catch {
            return false
        }
    }
}

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
    /// Applies the migrations not yet recorded, per (module, version), in order, each in its own transaction.
    func migrate(_ migrations: [Migration]) async throws
    /// True when the database answers a trivial query (for /readyz).
    func isReachable() async -> Bool
    /// Finishes queued work, then releases every connection; later calls fail.
    func close() async
}

extension Database {
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

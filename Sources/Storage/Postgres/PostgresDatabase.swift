import Foundation

/// The PostgreSQL implementation of `Database`, for several Herald nodes sharing one database.
///
/// Concurrency model:
/// - **A pool of connections** (`connectionCount`: `HERALD_DATABASE_CONNECTIONS`, default 8)
///   runs reads and writes alike (`ConnectionPool`); each connection lives on its own serial
///   `DispatchQueue`, so blocking libpq calls never occupy one of Swift's cooperative threads,
///   and work beyond the pool waits in its queue while its callers wait suspended.
/// - **Writes** run in `SERIALIZABLE` transactions by default. The modules were written for
///   SQLite's single writer, where a body's read-then-write cannot interleave with another
///   writer; SERIALIZABLE keeps that guarantee across nodes. PostgreSQL resolves conflicts by
///   failing one transaction with 40001 (or a deadlock with 40P01): write bodies are pure
///   database work, so the whole body is retried, up to `maxWriteAttempts` times in all, and
///   the last `.busy` error is thrown if every attempt conflicts. A hot write whose body is
///   correct under READ COMMITTED asks for `WriteIsolation.readCommitted` (native login,
///   refresh): it then only waits where another write holds the same row.
/// - **Reads** run in `REPEATABLE READ READ ONLY` transactions: one snapshot per body, like a
///   SQLite WAL read; a write inside fails with `.io` (as SQLite's read-only readers do).
/// - **Migrations** run each step in its own READ COMMITTED transaction that first takes a
///   transaction-scoped advisory lock, so nodes starting together apply each step once.
/// - **Reconnects.** A connection that broke (database restart, network, a switchover or
///   failover of the primary) is re-opened on its next use. A transaction that failed because
///   its connection was lost or refused before its COMMIT was sent committed nothing, so it is
///   run again on a new connection, pausing between tries, for up to `reconnectDeadlineSeconds`
///   (a planned switchover then costs clients a short wait, not a 503). Only then does the
///   call fail with `.unavailable`. A transaction whose connection was lost after its COMMIT
///   was sent may have committed: a write given a `LostCommitCheck` waits until its old
///   session has ended, reads whether it committed, and answers with its result or runs again;
///   any other write fails with `.unavailable` (the outcome is unknown).
///
/// SQL is translated from the modules' SQLite-flavoured dialect by `PostgresDialect`.
public final class PostgresDatabase: Database {
    /// Key of the advisory lock that serializes migrations across nodes ("herald" in ASCII).
    static let migrationLockKey: Int64 = 0x68_65_72_61_6C_64
    /// How many times a write body runs at most when it keeps hitting serialization failures.
    /// SERIALIZABLE locks index pages, not keys, so concurrent logins that insert into the same
    /// small tables conflict often (3 attempts failed a third of 40 concurrent logins); every
    /// conflict lets at least one transaction commit, so enough attempts with growing, jittered
    /// pauses always get through. The pauses add up to at most about 0.3 s.
    public static let maxWriteAttempts = 12
    /// The longest pause between two attempts, in microseconds.
    static let maxRetryPauseMicroseconds: UInt32 = 40_000

    /// How long a transaction whose connection was lost before its COMMIT is tried again on
    /// new connections: long enough for a switchover (about a second) or a failover to the
    /// synchronous standby (a few seconds), well under a client's timeout.
    public static let reconnectDeadlineSeconds = 5.0
    /// The first pause between two tries after a lost connection, doubling up to `maxReconnectPauseMicroseconds`.
    static let firstReconnectPauseMicroseconds: UInt32 = 50_000
    static let maxReconnectPauseMicroseconds: UInt32 = 500_000

    /// The location, with the password masked: safe to log.
    public let location: String
    /// Round trips of every connection so far (`herald_postgres_round_trips_total`).
    public let roundTrips: PostgresRoundTrips
    /// Transactions run again after a lost connection, and commits whose outcome a lost
    /// connection left unknown.
    public let connectionLosses = PostgresConnectionLosses()
    /// Write attempts that failed with a serialization failure or a deadlock, for `/metrics`.
    public let writeConflicts = PostgresWriteConflicts()
    private let pool: ConnectionPool<PostgresConnection>
    private let now: @Sendable () -> Date

    /// The connection pool's size, connections at work now and waits so far (`/metrics`).
    public var connectionPool: PostgresPoolUsage {
        PostgresPoolUsage(size: pool.size, inUse: pool.busyCount, waits: pool.waits)
    }

    /// Connects `connectionCount` connections to `url` (`postgres://user:password@host:port/db?sslmode=…`).
    /// Fails with `.unavailable` when the server cannot be reached.
    /// `now` stamps `schema_migrations.applied_at`.
    public init(url: String, connectionCount: Int, now: @escaping @Sendable () -> Date) throws(StorageError) {
        guard connectionCount >= 1 else {
            throw StorageError(code: .unsupported, message: "connectionCount must be at least 1 (got \(connectionCount))")
        }
        let roundTrips = PostgresRoundTrips()
        var connections: [PostgresConnection] = []
        for _ in 0..<connectionCount {
            connections.append(try PostgresConnection(url: url, roundTrips: roundTrips))
        }
        self.location = DatabaseLocation.postgres(url: url).description
        self.pool = ConnectionPool(connections, label: "herald.storage.postgres")
        self.roundTrips = roundTrips
        self.now = now
    }

    /// Runs body in a read-only snapshot transaction (REPEATABLE READ), off the Swift concurrency pool.
    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await pool.run { connection in
            // A read commits nothing: it can always run again.
            try self.rerunningAfterLostConnection(connection, ifCommitLost: .rerun) {
                try connection.transaction(.readOnlySnapshot, body)
            }
        }
    }

    /// One read, not run again on a lost connection: a readiness probe must answer at once.
    public func isReachable() async -> Bool {
        do {
            let rows = try await pool.run { connection in
                try connection.transaction(.readOnlySnapshot) { try $0.query("SELECT 1 AS one", []).count }
            }
            return rows == 1
        } catch {
            return false
        }
    }

    /// Runs body in one write transaction (SERIALIZABLE by default); commits when body returns,
    /// rolls back when it throws (the error is rethrown unchanged). A body that fails with a
    /// serialization failure or deadlock is run again, up to `maxWriteAttempts` times in all.
    @discardableResult
    public func write<T: Sendable>(isolation: WriteIsolation,
                                   _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await write(isolation == .serializable ? .serializable : .readCommitted, lostCommitCheck: nil, body)
    }

    /// A write whose lost COMMIT is resolved by reading, not answered `.unavailable` (see `Database`).
    @discardableResult
    public func write<T: Sendable>(isolation: WriteIsolation, lostCommitCheck: @escaping LostCommitCheck<T>,
                                   _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await write(isolation == .serializable ? .serializable : .readCommitted, lostCommitCheck: lostCommitCheck, body)
    }

    private func write<T: Sendable>(_ kind: PostgresConnection.TransactionKind, lostCommitCheck: LostCommitCheck<T>?,
                                    _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await pool.run { connection in
            var attempt = 1
            while true {
                // What the body of the attempt that sent its COMMIT returned: the check's input.
                var answer: T?
                let ifCommitLost: LostCommit<T> = lostCommitCheck.map { check in
                    .resolve { connection in
                        guard let value = answer else { return nil }
                        return try connection.transaction(.readOnlySnapshot) { db in
                            // What the lost COMMIT's pipeline would have read, read now.
                            guard try check(value, db) else { return false }
                            try connection.answerUnansweredReads()
                            return true
                        } ? value : nil
                    }
                } ?? .fail
                do {
                    return try self.rerunningAfterLostConnection(connection, ifCommitLost: ifCommitLost) {
                        answer = nil
                        return try connection.transaction(kind) { db in
                            let value = try body(db)
                            answer = value
                            return value
                        }
                    }
                } catch let error as StorageError where Self.isRetryable(error) {
                    self.writeConflicts.countConflict()
                    guard attempt < Self.maxWriteAttempts else { throw error }
                    // A random pause on this connection's thread (never the cooperative pool),
                    // doubling per attempt (full jitter), so conflicting writers — on this node
                    // or another — spread out instead of colliding again in lockstep.
                    usleep(UInt32.random(in: 0...min(Self.maxRetryPauseMicroseconds, 1_000 << UInt32(attempt))))
                    attempt += 1
                }
            }
        }
    }

    /// What a transaction whose connection was lost after its COMMIT was sent does next.
    enum LostCommit<T> {
        /// Runs again: it changed nothing (a read).
        case rerun
        /// Fails with `.unavailable`: whether it committed is unknown (a write without a check).
        case fail
        /// Reads, on a connection to the database as it is now, whether it committed: the
        /// value to answer with when it did, nil when it did not (it then runs again).
        case resolve((PostgresConnection) throws -> T?)
    }

    /// Runs `transaction` (on the borrowed connection's own thread) and, while it fails with
    /// `.unavailable`, runs it again after a pause (the next try re-opens the connection, which a
    /// multi-host URL points at the new primary), until `reconnectDeadlineSeconds` after the
    /// first failure; then the last error. A transaction that had sent its COMMIT is run again
    /// only when it did not commit: `ifCommitLost` says how to tell.
    func rerunningAfterLostConnection<T>(_ connection: PostgresConnection, ifCommitLost: LostCommit<T>,
                                         _ transaction: () throws -> T) throws -> T {
        var deadline: UInt64?
        var pause = Self.firstReconnectPauseMicroseconds
        /// Pauses before the next try on a new connection; false (no pause) when it would end past the deadline.
        func pauseBeforeNextTry() -> Bool {
            let now = DispatchTime.now().uptimeNanoseconds
            let end = deadline ?? now + UInt64(Self.reconnectDeadlineSeconds * 1_000_000_000)
            deadline = end
            guard now + UInt64(pause) * 1_000 < end else { return false }
            usleep(pause)
            pause = min(pause * 2, Self.maxReconnectPauseMicroseconds)
            return true
        }
        while true {
            do {
                return try transaction()
            } catch let error as StorageError where error.code == .unavailable {
                if connection.commitSent {
                    switch ifCommitLost {
                    case .rerun:
                        break
                    case .fail:
                        connectionLosses.countUnknownOutcome()
                        throw error
                    case .resolve(let committedValue):
                        guard let session = connection.backendOfLostCommit else {
                            connectionLosses.countUnknownOutcome()
                            throw error
                        }
                        // Until the lost session has ended it may still commit; then one read decides.
                        resolving: while true {
                            guard pauseBeforeNextTry() else {
                                connectionLosses.countUnknownOutcome()
                                throw error
                            }
                            do {
                                guard try connection.hasEnded(session) else { continue }
                                if let value = try committedValue(connection) {
                                    connectionLosses.countResolved(committed: true)
                                    return value
                                }
                                connectionLosses.countResolved(committed: false)
                                break resolving
                            } catch let error as StorageError where error.code == .unavailable {
                                continue
                            }
                        }
                        connectionLosses.countRerun()
                        continue
                    }
                }
                guard pauseBeforeNextTry() else { throw error }
                connectionLosses.countRerun()
            }
        }
    }

    /// Serialization failures and deadlocks: the transaction was rolled back and may simply run again.
    static func isRetryable(_ error: StorageError) -> Bool {
        error.sqlState == "40001" || error.sqlState == "40P01"
    }

    /// Applies the migrations not yet recorded, in (module registration order, version) order,
    /// each in its own transaction holding the migration advisory lock.
    public func migrate(_ migrations: [Migration]) async throws {
        let plan = try MigrationPlan(migrations)
        let lockKey = Self.migrationLockKey
        // READ COMMITTED, so statements after the lock see what a node that held it before committed.
        try await write(.readCommitted, lostCommitCheck: nil) { executor in
            _ = try executor.query("SELECT pg_advisory_xact_lock(?)", [.integer(lockKey)])
            try executor.execute(MigrationPlan.createTableSQL, [])
            try plan.checkNoUnknownVersions(in: executor)
        }
        for step in plan.steps {
            let appliedAt = now().unixSeconds
            _ = try await write(.readCommitted, lostCommitCheck: nil) { executor in
                _ = try executor.query("SELECT pg_advisory_xact_lock(?)", [.integer(lockKey)])
                return try MigrationPlan.apply(step, on: executor, appliedAt: appliedAt)
            }
        }
    }

    /// Lets running work finish, fails waiting callers, then closes every connection.
    /// Later calls throw; a second close does nothing.
    public func close() async {
        await pool.close { $0.close() }
    }
}

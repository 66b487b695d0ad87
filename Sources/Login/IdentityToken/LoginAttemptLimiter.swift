import Foundation
import Realms
import Storage
import Synchronization

/// Counts failed logins per (realm, client key: `RateLimitKey`) in fixed windows stored in the database, so
/// several Herald nodes share one count. A window is keyed by its start (unix seconds).
public final class LoginAttemptLimiter: Sendable {
    /// The `login` module's schema; apply with `Database.migrate`.
    public static let migrations: [Migration] = [
        Migration(module: "login", version: 1, name: "login failure windows", statements: [
            """
            CREATE TABLE login_failures (
                realm_id TEXT NOT NULL,
                client_ip TEXT NOT NULL,
                window_start INTEGER NOT NULL,
                failures INTEGER NOT NULL,
                PRIMARY KEY (realm_id, client_ip, window_start)
            )
            """,
            "CREATE INDEX login_failures_window ON login_failures (window_start)",
        ]),
    ]

    /// Windows older than this are purged (longer than any configurable window).
    static let retentionSeconds: Int64 = 2 * 86_400

    private let database: any Database
    private let now: @Sendable () -> Date
    private let lastPurge = Mutex<Int64>(0)

    /// A limiter over a database migrated with `migrations`; `now` is the clock.
    public init(database: any Database, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    /// Seconds until the current window ends when the limit is reached, else nil; read inside
    /// the caller's transaction (the login reads it with the realm, provider and client in one
    /// reader turn).
    public func retryAfter(_ db: any SQLExecutor, realmID: String, clientIP: String, limit: RateLimit) throws -> Int? {
        let check = retryAfterCheck(realmID: realmID, clientIP: clientIP, limit: limit)
        return try check.retryAfter(try db.query(check.statement.sql, check.statement.parameters))
    }

    /// `retryAfter(_:realmID:clientIP:limit:)` as one statement and the reading of its rows, for
    /// a login that sends it with its other reads in one round trip (`SQLExecutor.queryBatch`).
    func retryAfterCheck(realmID: String, clientIP: String, limit: RateLimit)
        -> (statement: (sql: String, parameters: [SQLValue]), retryAfter: ([Row]) throws -> Int?) {
        let at = now().unixSeconds
        let window = Int64(max(1, limit.windowSeconds))
        let start = at - at % window
        let statement = ("SELECT failures FROM login_failures WHERE realm_id = ? AND client_ip = ? AND window_start = ?",
                         [SQLValue.text(realmID), .text(RateLimitKey.key(forClientIP: clientIP)), .integer(start)])
        return (statement, { rows in
            let failures = try rows.first?.int("failures") ?? 0
            guard failures >= Int64(limit.failuresPerWindow) else { return nil }
            return Int(max(1, start + window - at))
        })
    }

    /// Counts one failure in the current window, recording `event` in the same transaction.
    public func recordFailure(realmID: String, clientIP: String, limit: RateLimit,
                              event: NewSecurityEvent? = nil) async throws {
        let at = now().unixSeconds
        let window = Int64(max(1, limit.windowSeconds))
        let start = at - at % window
        let purge = lastPurge.withLock { last -> Bool in
            guard at - last >= 60 else { return false }
            last = at
            return true
        }
        // READ COMMITTED on PostgreSQL: the count is one upsert, atomic on its own (a second
        // failure of the window waits for the first's row lock and adds to what it committed).
        // Under SERIALIZABLE every overlap of one client's failures, which is what a guessing
        // client sends, failed with a serialization error and ran again.
        try await database.write(isolation: .readCommitted) { db in
            try db.execute("""
                INSERT INTO login_failures (realm_id, client_ip, window_start, failures) VALUES (?, ?, ?, 1)
                ON CONFLICT (realm_id, client_ip, window_start) DO UPDATE SET failures = login_failures.failures + 1
                """, .text(realmID), .text(RateLimitKey.key(forClientIP: clientIP)), .integer(start))
            if let event { try SecurityEventLog.record(db, event) }
            if purge {
                try db.execute("DELETE FROM login_failures WHERE window_start < ?", .integer(at - Self.retentionSeconds))
            }
        }
    }
}

import Foundation
import Login
import Storage
import Synchronization

/// Counts requests to `/token`, session refresh and `/authorize` per (realm, endpoint, client
/// key) in fixed windows stored in the database, like `LoginAttemptLimiter`, so several nodes
/// on one PostgreSQL share one count. The check and the increment are one statement — a
/// conditional upsert that adds the request only while the window is under its limit — so a
/// burst of concurrent requests can never be admitted beyond the limit by its concurrency.
/// Failed admin authentications are counted the same way, per client IP under no realm.
final class RequestRateLimiter: Sendable {
    /// The endpoints that have a budget of their own.
    enum Endpoint: String, Sendable {
        case token
        case sessionRefresh = "session_refresh"
        case authorize
        /// Failed admin authentications, counted under no realm (`realm_id` '').
        case adminAuthentication = "admin_authentication"
    }

    /// The `request_limits` module's schema; apply with `Database.migrate`.
    static let migrations: [Migration] = [
        Migration(module: "request_limits", version: 1, name: "request windows", statements: [
            """
            CREATE TABLE request_windows (
                realm_id TEXT NOT NULL,
                endpoint TEXT NOT NULL,
                subject TEXT NOT NULL,
                window_start INTEGER NOT NULL,
                hits INTEGER NOT NULL,
                PRIMARY KEY (realm_id, endpoint, subject, window_start)
            )
            """,
            "CREATE INDEX request_windows_window ON request_windows (window_start)",
        ]),
    ]

    /// Client ids longer than this are not counted per client (no client has one: a bound on
    /// what a caller can make the table store).
    static let maxClientIDLength = 128

    private let database: any Database
    private let limits: RequestLimits
    private let now: @Sendable () -> Date
    private let lastPurge = Mutex<Int64>(0)

    init(database: any Database, limits: RequestLimits, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.limits = limits
        self.now = now
    }

    /// Counts one request of `clientIP` (and of `clientID` when given) at `endpoint` and
    /// answers nil when it is admitted, else the seconds until the window that refused it ends.
    /// A refused request is not counted: the per-IP count is taken back when the per-client
    /// limit refuses, in the same transaction.
    func admit(realmID: String, endpoint: Endpoint, clientIP: String, clientID: String?) async throws -> Int? {
        var subjects: [(subject: String, limit: RequestLimit)] = []
        if let perIP = limits.perIP { subjects.append(("ip:" + RateLimitKey.key(forClientIP: clientIP), perIP)) }
        if let perClient = limits.perClient, let clientID, !clientID.isEmpty, clientID.count <= Self.maxClientIDLength {
            subjects.append(("client:" + clientID, perClient))
        }
        guard !subjects.isEmpty else { return nil }
        let counts = subjects
        let at = now().unixSeconds
        let purgeBefore: Int64? = lastPurge.withLock { last in
            guard at - last >= 60 else { return nil }
            last = at
            // Every window that could still refuse a request has started within the longest window.
            return at - Int64(self.longestWindowSeconds) - 1
        }
        return try await database.write(isolation: .readCommitted) { db -> Int? in
            var counted: [(subject: String, start: Int64)] = []
            var refusedFor: Int?
            for (subject, limit) in counts {
                let window = Int64(limit.windowSeconds)
                let start = at - at % window
                guard try Self.countHit(db, realmID: realmID, endpoint: endpoint, subject: subject, start: start,
                                        limit: limit) else {
                    refusedFor = Int(max(1, start + window - at))
                    break
                }
                counted.append((subject, start))
            }
            if refusedFor != nil {
                for (subject, start) in counted {
                    try db.execute("""
                        UPDATE request_windows SET hits = hits - 1
                        WHERE realm_id = ? AND endpoint = ? AND subject = ? AND window_start = ?
                        """, .text(realmID), .text(endpoint.rawValue), .text(subject), .integer(start))
                }
            }
            if let purgeBefore {
                try db.execute("DELETE FROM request_windows WHERE window_start < ?", .integer(purgeBefore))
            }
            return refusedFor
        }
    }

    /// Seconds until the window of `clientIP`'s failed admin authentications ends when it is
    /// full, else nil (and nil when that limit is off). Reads only: a success is not counted.
    func adminFailureRefusal(clientIP: String) async throws -> Int? {
        guard let limit = limits.adminFailuresPerIP else { return nil }
        let subject = "ip:" + RateLimitKey.key(forClientIP: clientIP)
        let at = now().unixSeconds
        let window = Int64(limit.windowSeconds)
        let start = at - at % window
        let hits = try await database.read { db in
            try db.queryOne("""
                SELECT hits FROM request_windows WHERE realm_id = '' AND endpoint = ? AND subject = ? AND window_start = ?
                """, .text(Endpoint.adminAuthentication.rawValue), .text(subject), .integer(start))?.int("hits") ?? 0
        }
        return hits >= Int64(limit.requests) ? Int(max(1, start + window - at)) : nil
    }

    /// Counts one failed admin authentication of `clientIP`: nil when it was counted, else the
    /// seconds until the full window ends. The check and the increment are one conditional
    /// upsert, so concurrent failures can never be counted past the limit.
    func countAdminFailure(clientIP: String) async throws -> Int? {
        guard let limit = limits.adminFailuresPerIP else { return nil }
        let subject = "ip:" + RateLimitKey.key(forClientIP: clientIP)
        let at = now().unixSeconds
        let window = Int64(limit.windowSeconds)
        let start = at - at % window
        let counted = try await database.write(isolation: .readCommitted) { db in
            try Self.countHit(db, realmID: "", endpoint: .adminAuthentication, subject: subject, start: start, limit: limit)
        }
        return counted ? nil : Int(max(1, start + window - at))
    }

    /// The longest window of any limit: older windows can no longer refuse anything.
    private var longestWindowSeconds: Int {
        [limits.perIP, limits.perClient, limits.adminFailuresPerIP].compactMap { $0?.windowSeconds }.max() ?? 0
    }

    /// Adds one hit to the window unless it is full; false when full. RETURNING answers no row
    /// when the WHERE keeps the update from happening. PostgreSQL locks the row for the update,
    /// SQLite has one writer.
    private static func countHit(_ db: any SQLExecutor, realmID: String, endpoint: Endpoint, subject: String,
                                 start: Int64, limit: RequestLimit) throws -> Bool {
        try db.queryOne("""
            INSERT INTO request_windows (realm_id, endpoint, subject, window_start, hits) VALUES (?, ?, ?, ?, 1)
            ON CONFLICT (realm_id, endpoint, subject, window_start)
            DO UPDATE SET hits = request_windows.hits + 1 WHERE request_windows.hits < ?
            RETURNING hits
            """, .text(realmID), .text(endpoint.rawValue), .text(subject), .integer(start),
            .integer(Int64(limit.requests))) != nil
    }
}

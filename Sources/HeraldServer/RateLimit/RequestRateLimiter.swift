import Foundation
import Realms
import Storage
import Synchronization

/// Counts requests to `/token`, `/introspect`, `/revoke`, session refresh and `/authorize` per
/// (realm, endpoint, client key) in fixed windows. Each node checks and counts in memory (`RequestWindowTable`), so a
/// request costs no database write, and shares its counts through `request_windows` about once
/// a second (`RequestCountSharing`), so several nodes on one PostgreSQL share one budget: exact on one
/// node, and across nodes over by at most about one sharing interval of each node's traffic
/// (`RequestWindowTable`).
/// Failed admin authentications (per client IP) and audited admin refusals (per admin token)
/// are counted in `request_windows` directly, one conditional upsert each, under no realm:
/// they are rare, and exact across nodes.
final class RequestRateLimiter: Sendable {
    /// The endpoints that have a budget of their own.
    enum Endpoint: String, Sendable {
        case token
        /// `/introspect` and `/revoke` check client secrets as `/token` does, so each has the
        /// same limits, in a budget of its own (a client's introspection does not spend its tokens').
        case introspect
        case revoke
        case sessionRefresh = "session_refresh"
        case authorize
        /// The start of Apple's web flow (each keeps a row for ten minutes).
        case appleWebLogin = "apple_web_login"
        /// The start of Google's web sign-in (likewise).
        case googleWebLogin = "google_web_login"
        /// Failed admin authentications, counted under no realm (`realm_id` '').
        case adminAuthentication = "admin_authentication"
        /// Audited refusals per admin token (`AdminAccessPolicy.auditedDenials`), under no realm.
        case adminDenial = "admin_denial"
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
    /// How often a node shares its counts: the most another node's traffic can go unseen.
    static let sharingInterval: Duration = .seconds(1)
    /// Live windows held in memory (about 150 bytes each).
    static let windowCapacity = 100_000

    private let database: any Database
    private let limits: RequestLimits
    private let now: @Sendable () -> Date
    private let table: Mutex<RequestWindowTable>
    private let lastPurge = Mutex<Int64>(0)
    /// The exchange running or last run: exchanges run one after another (see `share`).
    private let lastExchange = Mutex<Task<Void, any Error>?>(nil)

    init(database: any Database, limits: RequestLimits, windowCapacity: Int,
         now: @escaping @Sendable () -> Date) {
        self.database = database
        self.limits = limits
        self.now = now
        table = Mutex(RequestWindowTable(capacity: windowCapacity))
    }

    /// Counts one request of `clientIP` (and of `clientID` when given) at `endpoint` and
    /// answers nil when it is admitted, else the seconds until the window that refused it ends.
    /// A refused request is not counted in any of its windows.
    func admit(realmID: String, endpoint: Endpoint, clientIP: String, clientID: String?) async throws -> Int? {
        var subjects: [(subject: String, limit: RequestLimit)] = []
        if let perIP = limits.perIP { subjects.append(("ip:" + RateLimitKey.key(forClientIP: clientIP), perIP)) }
        if let perClient = limits.perClient, let clientID, !clientID.isEmpty, clientID.count <= Self.maxClientIDLength {
            subjects.append(("client:" + clientID, perClient))
        }
        guard !subjects.isEmpty else { return nil }
        let at = now().unixSeconds
        let windows = subjects.map { subject, limit -> RequestWindowTable.Subject in
            let window = limit.window(at: at)
            return RequestWindowTable.Subject(
                key: .init(realmID: realmID, endpoint: endpoint.rawValue, subject: subject, windowStart: window.start),
                limit: Int64(limit.requests), window: window)
        }
        switch table.withLock({ $0.admit(windows, at: at) }) {
        case .admitted: return nil
        case .refused(let retryAfter): return retryAfter
        case .overCapacity: return try await admitInDatabase(windows, at: at)
        }
    }

    /// Windows held in memory (tests).
    var liveWindowCount: Int { table.withLock { $0.counts.count } }

    /// Shares every count not yet shared and learns the other nodes' totals. Exchanges run one
    /// after another, so when this returns, everything admitted before the call is in the
    /// database.
    func share() async throws {
        let exchange = lastExchange.withLock { previous -> Task<Void, any Error> in
            let next = Task { [self, previous] in
                _ = await previous?.result
                try await exchangeCounts()
            }
            previous = next
            return next
        }
        try await exchange.value
    }

    /// One exchange: adds each window's unshared hits to its row and reads the new total back;
    /// purges windows that can no longer refuse anything about once a minute.
    private func exchangeCounts() async throws {
        let at = now().unixSeconds
        let deltas = table.withLock { $0.takeUnshared(at: at) }
        let purgeBefore: Int64? = lastPurge.withLock { last in
            guard at - last >= 60 else { return nil }
            last = at
            // Every window that could still refuse a request has started within the longest window.
            return at - Int64(self.longestWindowSeconds) - 1
        }
        guard !deltas.isEmpty || purgeBefore != nil else { return }
        do {
            let totals = try await database.write(isolation: .readCommitted) { db -> [(RequestWindowTable.Key, Int64)] in
                var totals: [(RequestWindowTable.Key, Int64)] = []
                for delta in deltas {
                    let total = try db.queryOne("""
                        INSERT INTO request_windows (realm_id, endpoint, subject, window_start, hits) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (realm_id, endpoint, subject, window_start)
                        DO UPDATE SET hits = request_windows.hits + excluded.hits
                        RETURNING hits
                        """, .text(delta.key.realmID), .text(delta.key.endpoint), .text(delta.key.subject),
                        .integer(delta.key.windowStart), .integer(delta.hits))?.int("hits")
                    if let total { totals.append((delta.key, total)) }
                }
                if let purgeBefore {
                    try db.execute("DELETE FROM request_windows WHERE window_start < ?", .integer(purgeBefore))
                }
                return totals
            }
            table.withLock { table in
                for (key, total) in totals { table.learn(key, total: total) }
            }
        } catch {
            table.withLock { $0.restore(deltas) }
            throw error
        }
    }

    /// A request the full table cannot hold: checked and counted in the shared rows, one
    /// conditional upsert per window in one transaction. A refusal takes back the windows it
    /// already counted.
    private func admitInDatabase(_ subjects: [RequestWindowTable.Subject], at: Int64) async throws -> Int? {
        try await database.write(isolation: .readCommitted) { db -> Int? in
            var counted: [RequestWindowTable.Key] = []
            for subject in subjects {
                let key = subject.key
                guard try Self.countHit(db, realmID: key.realmID, endpoint: key.endpoint, subject: key.subject,
                                        start: key.windowStart, limit: subject.limit) else {
                    for key in counted {
                        try db.execute("""
                            UPDATE request_windows SET hits = hits - 1
                            WHERE realm_id = ? AND endpoint = ? AND subject = ? AND window_start = ?
                            """, .text(key.realmID), .text(key.endpoint), .text(key.subject), .integer(key.windowStart))
                    }
                    return subject.window.retryAfter(at: at)
                }
                counted.append(key)
            }
            return nil
        }
    }

    /// Seconds until the window of `clientIP`'s failed admin authentications ends when it is
    /// full, else nil (and nil when that limit is off). Reads only: a success is not counted.
    func adminFailureRefusal(clientIP: String) async throws -> Int? {
        guard let limit = limits.adminFailuresPerIP else { return nil }
        let subject = "ip:" + RateLimitKey.key(forClientIP: clientIP)
        let at = now().unixSeconds
        let window = limit.window(at: at)
        let hits = try await database.read { db in
            try db.queryOne("""
                SELECT hits FROM request_windows WHERE realm_id = '' AND endpoint = ? AND subject = ? AND window_start = ?
                """, .text(Endpoint.adminAuthentication.rawValue), .text(subject), .integer(window.start))?.int("hits") ?? 0
        }
        return hits >= Int64(limit.requests) ? window.retryAfter(at: at) : nil
    }

    /// Counts one failed admin authentication of `clientIP`: nil when it was counted, else the
    /// seconds until the full window ends. The check and the increment are one conditional
    /// upsert, so concurrent failures can never be counted past the limit.
    func countAdminFailure(clientIP: String) async throws -> Int? {
        guard let limit = limits.adminFailuresPerIP else { return nil }
        let subject = "ip:" + RateLimitKey.key(forClientIP: clientIP)
        let at = now().unixSeconds
        let window = limit.window(at: at)
        let counted = try await database.write(isolation: .readCommitted) { db in
            try Self.countHit(db, realmID: "", endpoint: Endpoint.adminAuthentication.rawValue, subject: subject,
                              start: window.start, limit: Int64(limit.requests))
        }
        return counted ? nil : window.retryAfter(at: at)
    }

    /// Counts one audited refusal of the admin token named `actor`, inside the caller's write
    /// transaction (the one that writes the audit entry): false when the token's window of
    /// `AdminAccessPolicy.auditedDenials` is full. One conditional upsert, exact across nodes.
    static func countAuditedDenial(_ db: any SQLExecutor, actor: String, at: Int64) throws -> Bool {
        let limit = AdminAccessPolicy.auditedDenials
        return try countHit(db, realmID: "", endpoint: Endpoint.adminDenial.rawValue, subject: "token:" + actor,
                            start: limit.window(at: at).start, limit: Int64(limit.requests))
    }

    /// The longest window of any limit: older windows can no longer refuse anything.
    private var longestWindowSeconds: Int {
        [limits.perIP, limits.perClient, limits.adminFailuresPerIP, AdminAccessPolicy.auditedDenials]
            .compactMap { $0?.windowSeconds }.max() ?? 0
    }

    /// Adds one hit to the window unless it is full; false when full. RETURNING answers no row
    /// when the WHERE keeps the update from happening. PostgreSQL locks the row for the update,
    /// SQLite has one writer.
    private static func countHit(_ db: any SQLExecutor, realmID: String, endpoint: String, subject: String,
                                 start: Int64, limit: Int64) throws -> Bool {
        try db.queryOne("""
            INSERT INTO request_windows (realm_id, endpoint, subject, window_start, hits) VALUES (?, ?, ?, ?, 1)
            ON CONFLICT (realm_id, endpoint, subject, window_start)
            DO UPDATE SET hits = request_windows.hits + 1 WHERE request_windows.hits < ?
            RETURNING hits
            """, .text(realmID), .text(endpoint), .text(subject), .integer(start), .integer(limit)) != nil
    }
}

import Foundation
import Storage

/// The per-realm record of security events (logins, token reuse, account status changes),
/// for `GET /api/admin/realms/{id}/events`. Writers record inside the transaction of the
/// thing that happened where there is one, so the event and its cause commit together.
/// Rows older than the retention period are purged by the maintenance loop.
public struct SecurityEventLog: Sendable {
    /// The `security_events` module's schema; apply with `Database.migrate` after the realms'.
    public static let migrations: [Migration] = [
        Migration(module: "security_events", version: 1, name: "security events", statements: [
            """
            CREATE TABLE security_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                at INTEGER NOT NULL,
                type TEXT NOT NULL,
                reason TEXT,
                account_id TEXT,
                client_id TEXT,
                session_id TEXT,
                client_ip TEXT,
                actor TEXT
            )
            """,
            "CREATE INDEX security_events_realm ON security_events (realm_id, id)",
            "CREATE INDEX security_events_realm_type ON security_events (realm_id, type, id)",
            "CREATE INDEX security_events_at ON security_events (at)",
        ]),
        // Every login records an event, and on PostgreSQL the realm foreign key's check takes a
        // FOR KEY SHARE lock on the realm's one `realms` row (multixacts under load). Realms
        // guarantees the relation itself: events are recorded for realms that exist (inside
        // the transaction of what happened there), and `RealmStore.delete` deletes a realm's
        // events with it. SQLite's foreign-key checks take no row locks, and its ALTER TABLE
        // cannot drop one: there the constraint (and its cascade) stays.
        Migration(module: "security_events", version: 2, name: "security events without a realm foreign key", statements: [
            "ALTER TABLE security_events DROP CONSTRAINT IF EXISTS security_events_realm_id_fkey",
        ], onlyOn: .postgres),
        // The purge walks the oldest ids instead (`purge(before:)`): one index fewer for every
        // event a login records.
        Migration(module: "security_events", version: 3, name: "security events without the time index", statements: [
            "DROP INDEX IF EXISTS security_events_at",
        ]),
        // AUTOINCREMENT made every commit that records an event also rewrite `sqlite_sequence`'s
        // page (issue #39). Without it SQLite takes the largest id + 1: ids still only grow
        // while that row exists, and a deleted newest id may be given again, which the newest-first
        // listing and its cursors do not mind (the purge removes the oldest rows, never the newest).
        // PostgreSQL's ids come from an identity sequence that never goes back.
        Migration(module: "security_events", version: 4, name: "security events without AUTOINCREMENT", statements: [
            """
            CREATE TABLE security_events_v4 (
                id INTEGER PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                at INTEGER NOT NULL,
                type TEXT NOT NULL,
                reason TEXT,
                account_id TEXT,
                client_id TEXT,
                session_id TEXT,
                client_ip TEXT,
                actor TEXT
            )
            """,
            """
            INSERT INTO security_events_v4 (id, realm_id, at, type, reason, account_id, client_id, session_id, client_ip, actor)
            SELECT id, realm_id, at, type, reason, account_id, client_id, session_id, client_ip, actor FROM security_events
            """,
            "DROP TABLE security_events",
            "ALTER TABLE security_events_v4 RENAME TO security_events",
            "CREATE INDEX security_events_realm ON security_events (realm_id, id)",
            "CREATE INDEX security_events_realm_type ON security_events (realm_id, type, id)",
        ], onlyOn: .sqlite),
    ]

    /// Longest stored text field: every value is an id, a reason label or an address, so a
    /// longer one is cut rather than letting a caller make rows large.
    static let maxFieldLength = 128
    /// Rows per purge DELETE, so one purge never holds the writer long.
    static let purgeBatchSize = 500

    private let database: any Database

    public init(database: any Database) {
        self.database = database
    }

    /// Appends an event within the caller's write transaction. Deferred: on PostgreSQL the
    /// insert travels with the transaction's next statement or its COMMIT (one round trip),
    /// and its failure still fails the transaction.
    public static func record(_ db: any SQLExecutor, _ event: NewSecurityEvent) throws {
        func bounded(_ text: String?) -> SQLValue {
            .optional(text.map { String($0.prefix(maxFieldLength)) })
        }
        try db.executeDeferred("""
            INSERT INTO security_events (realm_id, at, type, reason, account_id, client_id, session_id, client_ip, actor)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, .text(event.realmID), .integer(event.at), .text(event.type.rawValue), bounded(event.reason),
            bounded(event.accountID), bounded(event.clientID), bounded(event.sessionID), bounded(event.clientIP),
            bounded(event.actor))
    }

    /// Deletes a realm's events within the caller's write transaction (the realm's deletion):
    /// on PostgreSQL no foreign key cascades them (migration v2).
    static func deleteRealm(_ db: any SQLExecutor, realmID: String) throws {
        try db.execute("DELETE FROM security_events WHERE realm_id = ?", .text(realmID))
    }

    /// Appends an event in a write transaction of its own (when its cause had none).
    public func record(_ event: NewSecurityEvent) async throws {
        try await database.write { db in try Self.record(db, event) }
    }

    /// The realm's events, newest first, optionally of one type. Throws `notFound` for an
    /// unknown realm and `invalidInput` naming `cursor` for a cursor of another list.
    public func list(realmID: String, type: SecurityEventType? = nil, page: PageRequest = .first) async throws
        -> Page<SecurityEvent> {
        let before = try page.cursor.map { cursor throws(RealmsError) in try ListCursor.decodeInteger(cursor, list: "events") }
        return try await database.read { db in
            try RealmStore.requireRealm(db, id: realmID)
            var sql = "SELECT * FROM security_events WHERE realm_id = ?"
            var parameters: [SQLValue] = [.text(realmID)]
            if let type { sql += " AND type = ?"; parameters.append(.text(type.rawValue)) }
            if let before { sql += " AND id < ?"; parameters.append(.integer(before)) }
            sql += " ORDER BY id DESC LIMIT ?"
            parameters.append(.integer(Int64(page.limit + 1)))
            let rows = try db.query(sql, parameters)
            let events = try rows.prefix(page.limit).map { row in
                SecurityEvent(id: try row.int("id"), realmId: try row.string("realm_id"), at: try row.int("at"),
                              type: SecurityEventType(rawValue: try row.string("type")) ?? .loginFailed,
                              reason: try row.optionalString("reason"), accountId: try row.optionalString("account_id"),
                              clientId: try row.optionalString("client_id"),
                              sessionId: try row.optionalString("session_id"),
                              clientIp: try row.optionalString("client_ip"), actor: try row.optionalString("actor"))
            }
            let next = rows.count > page.limit ? events.last.map { ListCursor.encode(list: "events", key: $0.id) } : nil
            return Page(items: events, nextCursor: next)
        }
    }

    /// Deletes the events recorded before `cutoff` (unix seconds); returns how many. Ids follow
    /// the order events were recorded in, so each batch looks at the oldest `purgeBatchSize` ids
    /// only (no index on `at` for every login to write, and no batch reads more rows than it may
    /// delete). An event stamped earlier than one recorded before it (two nodes' clocks) goes
    /// with the first batch that sees it among the oldest ids. Safe on several nodes at once:
    /// each batch is one idempotent DELETE.
    @discardableResult
    public func purge(before cutoff: Int64) async throws -> Int {
        var deleted = 0
        while true {
            let batch = try await database.write { db in
                try db.execute("""
                    DELETE FROM security_events WHERE id IN (
                        SELECT id FROM (SELECT id, at FROM security_events ORDER BY id LIMIT ?) AS oldest WHERE at < ?)
                    """, .integer(Int64(Self.purgeBatchSize)), .integer(cutoff))
            }
            deleted += batch
            if batch == 0 { return deleted }
        }
    }
}

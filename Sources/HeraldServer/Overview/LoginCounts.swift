import Foundation
import Realms
import Storage
import Synchronization

/// Sign-in counts per realm and hour, for the realm overview. A login only adds one to a bucket
/// in memory (`record`); `LoginCountSharing` adds the buckets to `login_counts` every
/// `sharingInterval` as deltas (one upsert per bucket), so several nodes sum into the same rows
/// and no login waits on, or adds a statement to, a database write. The table holds at most
/// `retention` of hours × the labels seen, whatever the number of logins: that is what keeps the
/// overview's read bounded.
final class LoginCounts: Sendable {
    /// One bucket: a realm's hour and the labels of `herald_logins_total`.
    struct Key: Hashable, Sendable {
        let realmID: String
        let hourStart: Int64
        let provider: String
        let door: String
        let outcome: String
        let reason: String
    }

    /// The sum of the rows of one slot (an hour or a day) and labels, as read for the overview.
    struct Bucket: Sendable, Equatable {
        /// Unix seconds at the slot's start.
        let start: Int64
        let provider: String
        let door: String
        let outcome: String
        let reason: String
        let count: Int64
    }

    /// The `login_counts` module's schema; apply with `Database.migrate`.
    static let migrations: [Migration] = [
        Migration(module: "login_counts", version: 1, name: "hourly sign-in counts", statements: [
            """
            CREATE TABLE login_counts (
                realm_id TEXT NOT NULL,
                hour_start INTEGER NOT NULL,
                provider TEXT NOT NULL,
                door TEXT NOT NULL,
                outcome TEXT NOT NULL,
                reason TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (realm_id, hour_start, provider, door, outcome, reason)
            )
            """,
            "CREATE INDEX login_counts_hour ON login_counts (hour_start)",
        ]),
    ]

    /// How often a node adds its buckets to the table: the most the overview lags behind.
    static let sharingInterval: Duration = .seconds(2)
    /// Buckets held between two exchanges. The labels are bounded (realm ids are slugs of realms
    /// that exist, providers, doors and reasons closed sets), so this is only reached by many
    /// realms at once; a login past it is dropped from the overview (counted in `dropped`), never
    /// waited on.
    static let capacity = 20_000
    /// How long rows are kept: the longest window (7 days) and the hour it started in.
    static let retention: Int64 = 8 * 86_400
    /// A label longer than this is stored as `other` (every real one is a short identifier).
    static let maxLabelLength = 64

    private struct Pending {
        var counts: [Key: Int64] = [:]
        var dropped = 0
    }

    private let database: any Database
    private let capacity: Int
    private let now: @Sendable () -> Date
    private let pending = Mutex(Pending())
    private let lastPurge = Mutex<Int64>(0)

    init(database: any Database, capacity: Int = LoginCounts.capacity, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.capacity = capacity
        self.now = now
    }

    /// Counts one login in the current hour's bucket (memory only).
    func record(realmID: String, provider: String, door: String, outcome: String, reason: String) {
        let at = now().unixSeconds
        let key = Key(realmID: realmID, hourStart: at - at % 3600, provider: Self.label(provider), door: Self.label(door),
                      outcome: Self.label(outcome), reason: Self.label(reason))
        pending.withLock { pending in
            if pending.counts[key] == nil, pending.counts.count >= capacity {
                pending.dropped += 1
                return
            }
            pending.counts[key, default: 0] += 1
        }
    }

    /// Buckets not yet added to the table (tests).
    var pendingCount: Int { pending.withLock { $0.counts.count } }

    /// Adds every pending bucket to its row in one transaction and answers how many logins were
    /// dropped for want of room since the last exchange. On failure the buckets are kept for the
    /// next exchange. Removes rows past `retention` about once an hour.
    @discardableResult
    func share() async throws -> Int {
        let at = now().unixSeconds
        let (deltas, dropped) = pending.withLock { pending in
            defer { pending = Pending() }
            return (pending.counts, pending.dropped)
        }
        let purgeBefore: Int64? = lastPurge.withLock { last in
            guard at - last >= 3600 else { return nil }
            last = at
            return at - Self.retention
        }
        guard !deltas.isEmpty || purgeBefore != nil else { return dropped }
        do {
            try await database.write(isolation: .readCommitted) { db in
                // A stable order, so two nodes' exchanges take their row locks in the same order.
                for (key, count) in deltas.sorted(by: { Self.precedes($0.key, $1.key) }) {
                    try db.execute("""
                        INSERT INTO login_counts (realm_id, hour_start, provider, door, outcome, reason, count)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (realm_id, hour_start, provider, door, outcome, reason)
                        DO UPDATE SET count = login_counts.count + excluded.count
                        """, .text(key.realmID), .integer(key.hourStart), .text(key.provider), .text(key.door),
                        .text(key.outcome), .text(key.reason), .integer(count))
                }
                if let purgeBefore {
                    try db.execute("DELETE FROM login_counts WHERE hour_start < ?", .integer(purgeBefore))
                }
            }
        } catch {
            pending.withLock { pending in
                for (key, count) in deltas {
                    if pending.counts[key] == nil, pending.counts.count >= capacity {
                        pending.dropped += Int(count)
                    } else {
                        pending.counts[key, default: 0] += count
                    }
                }
                pending.dropped += dropped
            }
            throw error
        }
        return dropped
    }

    /// The realm's counts from `from` (an hour's start) on, summed per slot of `slotSeconds` (a
    /// multiple of an hour) and labels, oldest first. The database sums, so a 7-day window
    /// sends 7 rows per labels, not 168.
    func buckets(realmID: String, from: Int64, slotSeconds: Int64) async throws -> [Bucket] {
        try await database.read { db in
            try db.query("""
                SELECT (hour_start - ?) / ? AS slot, provider, door, outcome, reason, CAST(SUM(count) AS BIGINT) AS total
                FROM login_counts
                WHERE realm_id = ? AND hour_start >= ?
                GROUP BY slot, provider, door, outcome, reason
                ORDER BY slot, provider, door, outcome, reason
                """, .integer(from), .integer(slotSeconds), .text(realmID), .integer(from)).map { row in
                Bucket(start: from + (try row.int("slot")) * slotSeconds, provider: try row.string("provider"),
                       door: try row.string("door"), outcome: try row.string("outcome"),
                       reason: try row.string("reason"), count: try row.int("total"))
            }
        }
    }

    private static func label(_ value: String) -> String {
        value.isEmpty || value.utf8.count > maxLabelLength ? "other" : value
    }

    private static func precedes(_ a: Key, _ b: Key) -> Bool {
        (a.realmID, a.hourStart, a.provider, a.door, a.outcome, a.reason)
            < (b.realmID, b.hourStart, b.provider, b.door, b.outcome, b.reason)
    }
}

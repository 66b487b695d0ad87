import Foundation
import Storage

/// Deletes sessions that ended (revoked, or past their absolute or idle expiry) more than
/// `retentionSeconds` ago, with their refresh tokens (ON DELETE CASCADE). Without it the two
/// tables only grow: every login adds a session and every refresh a token row.
///
/// Nothing a client holds changes meaning: a token of a deleted session was already refused
/// (revoked or expired) and is now refused as unknown — the same 401, and there is no family
/// left to revoke on reuse. Ended sessions stay listed to admins for the retention period.
/// Safe on several nodes at once: each batch is one idempotent DELETE.
public struct EndedSessionPurge: Sendable {
    /// How long an ended session stays listed (admin session history).
    public static let retentionSeconds: Int64 = 30 * 86_400
    /// Rows per DELETE, so one purge never holds the writer long.
    static let batchSize = 500

    private let database: any Database
    private let now: @Sendable () -> Date

    /// One batch: each of the three ends is found through its own index (sessions_expires and
    /// the partial sessions_revoked, sessions_idle_expires), never by scanning the table.
    static let deleteSQL = """
        DELETE FROM sessions WHERE id IN (
            SELECT id FROM sessions WHERE expires_at < ? OR revoked_at < ? OR idle_expires_at < ? LIMIT ?)
        """

    public init(database: any Database, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    /// Deletes every session that ended before the retention period; returns how many.
    @discardableResult
    public func run() async throws -> Int {
        let cutoff = now().unixSeconds - Self.retentionSeconds
        var deleted = 0
        while true {
            let batch = try await database.write { db in
                try db.execute(Self.deleteSQL, .integer(cutoff), .integer(cutoff), .integer(cutoff), .integer(Int64(Self.batchSize)))
            }
            deleted += batch
            if batch == 0 { return deleted }
        }
    }
}

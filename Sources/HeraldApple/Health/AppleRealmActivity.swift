import Foundation
import Storage

/// What Apple's tables say about one realm, for the realm overview's Apple panel: the last
/// server-to-server notification and the notifications by type since a time, the Apple refresh
/// tokens held, and the revocations still queued or given up. Read here, where those tables are
/// owned, so the overview never reads them itself. Each figure is one indexed query.
public struct AppleRealmActivity: Sendable, Equatable {
    /// One notification, as the overview shows it.
    public struct Notification: Sendable, Equatable {
        public var type: String
        public var receivedAt: Int64

        public init(type: String, receivedAt: Int64) {
            self.type = type
            self.receivedAt = receivedAt
        }
    }

    /// The newest notification received for the realm (verified or not), nil when none is kept.
    public var lastNotification: Notification?
    /// Notifications received since the window's start, by type.
    public var notificationsByType: [String: Int64]
    /// Apple refresh tokens stored for the realm's accounts.
    public var refreshTokens: Int64
    /// When the oldest of them was stored (how long notifications could have come).
    public var oldestRefreshTokenAt: Int64?
    /// Revocations queued and still to be tried.
    public var pendingRevocations: Int64
    /// Revocations given up after `AppleTokenVault.maximumAttempts` (Apple never took them).
    public var failedRevocations: Int64

    public init(lastNotification: Notification? = nil, notificationsByType: [String: Int64] = [:], refreshTokens: Int64 = 0,
                pendingRevocations: Int64 = 0, failedRevocations: Int64 = 0) {
        self.lastNotification = lastNotification
        self.notificationsByType = notificationsByType
        self.refreshTokens = refreshTokens
        self.pendingRevocations = pendingRevocations
        self.failedRevocations = failedRevocations
    }

    /// Reads the realm's figures, notifications counted from `since` (unix seconds) on.
    public static func load(_ database: any Database, realmID: String, since: Int64) async throws -> AppleRealmActivity {
        try await database.read { db in try load(db, realmID: realmID, since: since) }
    }

    /// `load` inside a caller's read.
    public static func load(_ db: any SQLExecutor, realmID: String, since: Int64) throws -> AppleRealmActivity {
        var activity = AppleRealmActivity()
        if let row = try db.queryOne("""
            SELECT type, received_at FROM apple_notifications WHERE realm_id = ? ORDER BY received_at DESC LIMIT 1
            """, .text(realmID)) {
            activity.lastNotification = Notification(type: try row.string("type"), receivedAt: try row.int("received_at"))
        }
        for row in try db.query("""
            SELECT type, COUNT(*) AS n FROM apple_notifications WHERE realm_id = ? AND received_at >= ? GROUP BY type
            """, .text(realmID), .integer(since)) {
            activity.notificationsByType[try row.string("type")] = try row.int("n")
        }
        let tokens = try db.queryOne("SELECT COUNT(*) AS n, MIN(stored_at) AS oldest FROM apple_refresh_tokens WHERE realm_id = ?",
                                     .text(realmID))
        activity.refreshTokens = try tokens?.int("n") ?? 0
        activity.oldestRefreshTokenAt = try tokens?.optionalInt("oldest")
        let revocations = try db.queryOne("""
            SELECT COALESCE(SUM(CASE WHEN attempts < ? THEN 1 ELSE 0 END), 0) AS pending,
                   COALESCE(SUM(CASE WHEN attempts >= ? THEN 1 ELSE 0 END), 0) AS failed
            FROM apple_token_revocations WHERE realm_id = ?
            """, .integer(AppleTokenVault.maximumAttempts), .integer(AppleTokenVault.maximumAttempts), .text(realmID))
        activity.pendingRevocations = try revocations?.int("pending") ?? 0
        activity.failedRevocations = try revocations?.int("failed") ?? 0
        return activity
    }
}

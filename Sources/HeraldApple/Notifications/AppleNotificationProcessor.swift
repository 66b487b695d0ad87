import Foundation
import Realms
import Storage
import Synchronization

/// Applies verified Apple notifications, each once per (realm, `jti`), in one write
/// transaction with its audit entry:
/// - `consent-revoked`: the Apple identity is unlinked and the account's sessions revoked
///   (Apple is Herald's only identity provider, so every session came from it);
/// - `account-delete`: the account is deleted as the admin delete does it (email freed,
///   identities unlinked, sessions revoked);
/// - for both, the account's stored Apple refresh tokens are deleted (`AppleTokenVault.forget`)
///   but not queued for revocation: Apple has already revoked them;
/// - `email-enabled` / `email-disabled`: the identity's relay flag is recorded.
/// A subject Herald does not know, or a type it does not know, is recorded and acknowledged:
/// Apple must not retry it.
public final class AppleNotificationProcessor: Sendable {
    /// The `apple-notifications` module's schema: the processed `jti`s (kept past the
    /// verifier's maximum age, so a replay is always recognised), with type and outcome only.
    public static let migrations: [Migration] = [
        Migration(module: "apple-notifications", version: 1, name: "processed notifications", statements: [
            """
            CREATE TABLE apple_notifications (
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                jti TEXT NOT NULL,
                type TEXT NOT NULL,
                outcome TEXT NOT NULL,
                received_at INTEGER NOT NULL,
                PRIMARY KEY (realm_id, jti)
            )
            """,
            "CREATE INDEX apple_notifications_received ON apple_notifications (received_at)",
        ]),
        // The realm overview's last notification and counts by type (`AppleRealmActivity`) read
        // one realm's newest rows: an index range, not a scan of the realm's history.
        Migration(module: "apple-notifications", version: 2, name: "notifications by realm and time", statements: [
            "CREATE INDEX apple_notifications_realm_received ON apple_notifications (realm_id, received_at)",
        ]),
    ]

    /// What processing did.
    public enum Outcome: String, Sendable, Equatable {
        case applied
        /// Verified, but about no account Herald has (or nothing to change).
        case ignored
        /// This `jti` was processed before: nothing changed this time.
        case duplicate
    }

    /// Rows are kept this long after receipt: longer than a payload may be old.
    static let retentionSeconds = AppleNotificationVerifier.maximumAgeSeconds + 86_400

    private let database: any Database
    private let sessions: any AccountSessionRevoker
    private let now: @Sendable () -> Date
    /// Unix seconds of the last purge by this process: at most one a minute, bounded.
    private let lastPurge = Mutex<Int64>(0)

    public init(database: any Database, sessions: any AccountSessionRevoker, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.sessions = sessions
        self.now = now
    }

    /// Applies `notification` to realm `realmID` unless its `jti` was processed already.
    public func process(_ notification: AppleNotification, realmID: String) async throws -> Outcome {
        let at = now().unixSeconds
        let purge = lastPurge.withLock { last -> Bool in
            guard at - last >= 60 else { return false }
            last = at
            return true
        }
        let sessions = self.sessions
        return try await database.write { db in
            if purge {
                try db.execute("DELETE FROM apple_notifications WHERE received_at < ?", .integer(at - Self.retentionSeconds))
            }
            let first = try db.execute("""
                INSERT INTO apple_notifications (realm_id, jti, type, outcome, received_at) VALUES (?, ?, ?, 'pending', ?)
                ON CONFLICT (realm_id, jti) DO NOTHING
                """, .text(realmID), .text(notification.id), .text(notification.type.label), .integer(at))
            guard first > 0 else { return .duplicate }
            let outcome = try Self.apply(db, notification, realmID: realmID, at: at, sessions: sessions)
            try db.execute("UPDATE apple_notifications SET outcome = ? WHERE realm_id = ? AND jti = ?",
                           .text(outcome.rawValue), .text(realmID), .text(notification.id))
            return outcome
        }
    }

    static func apply(_ db: any SQLExecutor, _ notification: AppleNotification, realmID: String, at: Int64,
                      sessions: any AccountSessionRevoker) throws -> Outcome {
        let provider = AppleIdentityVerifier.provider
        let subject = notification.subject
        let context = try ChangeContext(actor: "apple", reason: "Apple notification \(notification.type.label)")
        guard let account = try AccountStore.load(db, realmID: realmID, provider: provider, openID: subject) else {
            // Still audited: an operator can see that Apple reported something Herald had no account for.
            try AuditLog.record(db, at: at, context: context, action: "apple.notification.ignored",
                                target: "realms/\(realmID)/providers/apple", realmID: realmID,
                                changes: ["type": FieldChange(before: .null, after: .string(notification.type.label))])
            return .ignored
        }
        let target = "realms/\(realmID)/accounts/\(account.id)"
        func audit(_ action: String, _ changes: [String: FieldChange]) throws {
            try AuditLog.record(db, at: at, context: context, action: action, target: target, realmID: realmID,
                                changes: changes)
        }
        switch notification.type {
        case .consentRevoked:
            try AccountStore.unlink(db, realmID: realmID, provider: provider, openID: subject)
            try sessions.revokeSessions(realmID: realmID, accountID: account.id, in: db)
            // The user withdrew the app's authorization at Apple, which revoked its refresh
            // tokens there: revoking them again would be a wasted call, and keeping them would
            // keep a credential for an authorization that no longer exists.
            try AppleTokenVault.forget(db, realmID: realmID, accountID: account.id)
            try audit("account.unlink", ["identity": FieldChange(before: .string(provider), after: .null)])
            return .applied
        case .accountDelete:
            // Unlike the admin delete (AccountStore's deletion hook queues a revocation at
            // Apple), the Apple account is already gone, and its tokens with it: they are only
            // deleted here, in the same transaction as the account.
            guard try AccountStore.delete(db, realmID: realmID, id: account.id, at: at, context: context,
                                          sessions: sessions) else { return .ignored }
            try AppleTokenVault.forget(db, realmID: realmID, accountID: account.id)
            return .applied
        case .emailEnabled, .emailDisabled:
            let enabled = notification.type == .emailEnabled
            try AccountStore.setEmailRelay(db, realmID: realmID, provider: provider, openID: subject, enabled: enabled)
            try audit("identity.email_relay", ["emailRelayEnabled": FieldChange(before: .null, after: .bool(enabled))])
            return .applied
        case .other:
            try audit("apple.notification.ignored", ["type": FieldChange(before: .null, after: .string("other"))])
            return .ignored
        }
    }
}

import Foundation
import Realms
import Storage

/// Realms' hook: disabling or deleting an account or a client revokes its sessions in the same
/// transaction.
public struct SessionRevoker: AccountSessionRevoker, ClientSessionRevoker {
    private let now: @Sendable () -> Date

    /// A revoker stamping revocations with `now`.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// Revokes every live session of the account inside the caller's transaction.
    public func revokeSessions(realmID: String, accountID: String, in executor: any SQLExecutor) throws {
        _ = try SessionStore.revokeAll(executor, realmID: realmID, accountID: accountID, reason: "account",
                                       at: now().unixSeconds)
    }

    /// Revokes every live session of the client inside the caller's transaction.
    public func revokeSessions(realmID: String, clientID: String, in executor: any SQLExecutor) throws {
        try executor.execute("""
            UPDATE sessions SET revoked_at = ?, revoke_reason = 'client'
            WHERE realm_id = ? AND client_id = ? AND revoked_at IS NULL
            """, .integer(now().unixSeconds), .text(realmID), .text(clientID))
    }
}

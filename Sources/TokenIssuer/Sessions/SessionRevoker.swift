import Foundation
import Realms
import Storage

/// Realms' hook: disabling or deleting an account revokes its sessions in the same transaction.
public struct SessionRevoker: AccountSessionRevoker {
    private let now: @Sendable () -> Date

    /// A revoker stamping revocations with `now`.
    public init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// Revokes every live session of the account inside the caller's transaction.
    public func revokeSessions(realmID: String, accountID: String, in executor: any SQLExecutor) throws {
        _ = try TokenService.revokeAll(executor, realmID: realmID, accountID: accountID, reason: "account",
                                       at: now().unixSeconds)
    }
}

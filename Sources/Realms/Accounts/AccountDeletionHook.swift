import Storage

/// Work an operator's account deletion owes outside Realms, done in the deletion's own write
/// transaction (HeraldApple queues the revocation of the account's Apple tokens here). Realms
/// cannot depend on the modules that implement it.
public protocol AccountDeletionHook: Sendable {
    func accountDeleted(realmID: String, accountID: String, at: Int64, in executor: any SQLExecutor) throws
}

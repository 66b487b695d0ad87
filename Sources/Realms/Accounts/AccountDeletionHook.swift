import Storage

/// Work an account's deletion owes outside Realms, done in the deletion's own write
/// transaction (HeraldApple queues the revocation of the account's Apple tokens here). Realms
/// cannot depend on the modules that implement it.
public protocol AccountDeletionHook: Sendable {
    /// Does the work and says in one short label what it did (for the Apple tokens `queued`,
    /// `not_stored` or `not_configured`), recorded as the deletion event's `reason` so a retry
    /// of the owner's delete can answer what the first one did.
    func accountDeleted(realmID: String, accountID: String, at: Int64, in executor: any SQLExecutor) throws -> String
}

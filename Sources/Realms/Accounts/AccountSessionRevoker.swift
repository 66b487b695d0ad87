import Storage

/// Revokes an account's sessions inside the transaction that disables or deletes it. The
/// TokenIssuer module implements it once sessions exist; Realms cannot depend on it.
public protocol AccountSessionRevoker: Sendable {
    /// Revokes every session of the account; runs in the caller's write transaction.
    func revokeSessions(realmID: String, accountID: String, in executor: any SQLExecutor) throws
}


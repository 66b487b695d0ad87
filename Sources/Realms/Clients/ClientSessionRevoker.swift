import Storage

/// Revokes a client's sessions inside the transaction that disables or deletes the client, so
/// enabling it again, or registering its id anew, revives none of them. TokenIssuer implements
/// it; Realms cannot depend on it.
public protocol ClientSessionRevoker: Sendable {
    /// Revokes every live session of the client; runs in the caller's write transaction.
    func revokeSessions(realmID: String, clientID: String, in executor: any SQLExecutor) throws
}


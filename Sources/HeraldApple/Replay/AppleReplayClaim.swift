import Storage

/// A replay claim that verification decided on but left to the caller's write transaction, so
/// the login (`IdentityTokenLogin`) records it in the same commit as the account and the
/// session (one writer turn, one sync per login). Holds the token's subject and nonce in
/// memory only; only their hash is stored.
struct AppleReplayClaim: Sendable {
    let store: AppleReplayStore
    let realmID: String
    let subject: String
    let nonce: String
    /// Unix seconds: the token's expiry plus the clock leeway.
    let expiresAt: Int64
    /// Unix seconds at verification.
    let now: Int64
    /// Expired rows to purge with the claim, decided before the transaction (its body may run twice).
    let purgeLimit: Int

    /// Records the claim in `db`'s transaction; false when the token was already used.
    func record(in db: any SQLExecutor) throws -> Bool {
        try store.claim(db, realmID: realmID, subject: subject, nonce: nonce, expiresAt: expiresAt, now: now,
                        purgingUpTo: purgeLimit)
    }

    /// Whether the token is claimed now (see `ReplayClaim.isRecorded(in:)`).
    func isRecorded(in db: any SQLExecutor) throws -> Bool {
        try store.isClaimed(db, realmID: realmID, subject: subject, nonce: nonce, expiresAt: expiresAt)
    }

    /// The claim's one statement when no purge is due (see `ReplayClaim.statement`).
    var statement: (sql: String, parameters: [SQLValue])? {
        guard purgeLimit == 0 else { return nil }
        return store.claimStatement(realmID: realmID, subject: subject, nonce: nonce, expiresAt: expiresAt)
    }
}

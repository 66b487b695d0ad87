import Login
import Storage

/// A verified Google token's single-use mark, recorded by the login's write transaction with
/// the account and the session. Holds only the key's hash.
struct GoogleReplayClaim: ReplayClaim {
    let store: GoogleReplayStore
    let realmID: String
    let keyHash: [UInt8]
    /// Unix seconds: the token's expiry plus the clock leeway.
    let expiresAt: Int64
    /// Unix seconds at verification.
    let now: Int64
    /// Expired rows to purge with the claim, decided before the transaction (its body may run twice).
    let purgeLimit: Int

    /// Records the claim in `db`'s transaction; false when the token was already used.
    func record(in db: any SQLExecutor) throws -> Bool {
        try store.claim(db, realmID: realmID, keyHash: keyHash, expiresAt: expiresAt, now: now, purgingUpTo: purgeLimit)
    }

    /// Whether the token is claimed now (see `ReplayClaim.isRecorded(in:)`).
    func isRecorded(in db: any SQLExecutor) throws -> Bool {
        try store.isClaimed(db, realmID: realmID, keyHash: keyHash, expiresAt: expiresAt)
    }

    /// The claim's one statement when no purge is due (see `ReplayClaim.statement`).
    var statement: (sql: String, parameters: [SQLValue])? {
        guard purgeLimit == 0 else { return nil }
        return store.claimStatement(realmID: realmID, keyHash: keyHash, expiresAt: expiresAt)
    }
}

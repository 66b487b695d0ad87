import JOSE
import Storage
import Synchronization

/// The single-use ledger of one provider's identity tokens: which tokens were accepted, until
/// they expire, across every node sharing the database. A token is told apart by its
/// provider's key (`key(_:)`: SHA-256 over its subject and nonce, or its signature) and the
/// moment its acceptance ends (`expires_at`: its `exp` plus the fixed clock leeway,
/// `IdentityTokenBounds.clockLeewaySeconds`); the claim is one `INSERT … ON CONFLICT DO
/// NOTHING`, and the row it returns says this request was first. Only the key's hash is stored.
///
/// The table's key starts with `expires_at` (`rekeyByExpiry`), so each claim lands at the right
/// edge of one B-tree, shared by the logins of a commit, and the purge deletes from its left:
/// keyed by the hash first, every login wrote a random leaf of a second B-tree (≈ 8 KB of WAL
/// and checkpoint per login on SQLite, issue #39). The price: two tokens of one subject that
/// carry the same nonce but end at different moments are two claims; each is still accepted
/// once (RESULTS.md, "the replay key").
public final class TokenReplayLedger: Sendable {
    private let table: String
    private let purgeIntervalSeconds: Int64
    private let purgeBatchSize: Int
    /// Unix seconds of the last opportunistic purge by this process.
    private let lastPurge = Mutex<Int64>(0)

    /// A ledger over `table` whose claims purge expired rows opportunistically, at most once
    /// per `purgeIntervalSeconds` and at most `purgeBatchSize` rows at a time, so a claim never
    /// pays for an unbounded delete.
    public init(table: String, purgeIntervalSeconds: Int64 = 60, purgeBatchSize: Int = 500) {
        self.table = table
        self.purgeIntervalSeconds = purgeIntervalSeconds
        self.purgeBatchSize = purgeBatchSize
    }

    /// The statements that created a ledger's `table` in its first migration, keyed by
    /// (realm, key hash); `rekeyByExpiry` rebuilds it.
    public static func createTable(_ table: String) -> [String] {
        [
            """
            CREATE TABLE \(table) (
                realm_id TEXT NOT NULL,
                key_hash BLOB NOT NULL,
                expires_at INTEGER NOT NULL,
                PRIMARY KEY (realm_id, key_hash)
            )
            """,
            "CREATE INDEX \(table)_expires_at ON \(table) (expires_at)",
        ]
    }

    /// The statements that rebuild `table` keyed by (expires_at, realm, key hash): one B-tree
    /// (`WITHOUT ROWID` on SQLite) in place of a table, its key's index and the expiry index.
    /// Every row is carried over as it is, so a token claimed before the rebuild is still
    /// refused after it (its `expires_at` is computed the same way).
    public static func rekeyByExpiry(_ table: String) -> [String] {
        [
            """
            CREATE TABLE \(table)_by_expiry (
                expires_at INTEGER NOT NULL,
                realm_id TEXT NOT NULL,
                key_hash BLOB NOT NULL,
                PRIMARY KEY (expires_at, realm_id, key_hash)
            ) WITHOUT ROWID
            """,
            "INSERT INTO \(table)_by_expiry (expires_at, realm_id, key_hash) SELECT expires_at, realm_id, key_hash FROM \(table)",
            "DROP TABLE \(table)",
            "ALTER TABLE \(table)_by_expiry RENAME TO \(table)",
        ]
    }

    /// Records `keyHash` for the realm until `expiresAt` inside the caller's write transaction
    /// (the login claims, resolves the account and starts the session in one commit); true on
    /// first use, false for a replay. Times are unix seconds. The claim holds only if that
    /// transaction commits. `purgingUpTo` comes from ``purgeBudget(now:)``, taken before the
    /// transaction (a write body may run more than once and must change nothing outside the
    /// database).
    public func claim(_ db: any SQLExecutor, realmID: String, keyHash: [UInt8], expiresAt: Int64, now: Int64,
                      purgingUpTo purgeLimit: Int) throws -> Bool {
        let statement = claimStatement(realmID: realmID, keyHash: keyHash, expiresAt: expiresAt)
        let claimed = try !db.query(statement.sql, statement.parameters).isEmpty
        if purgeLimit > 0 {
            _ = try db.execute(
                """
                DELETE FROM \(table) WHERE (expires_at, realm_id, key_hash) IN (
                    SELECT expires_at, realm_id, key_hash FROM \(table) WHERE expires_at <= ? LIMIT ?)
                """,
                [.integer(now), .integer(Int64(purgeLimit))])
        }
        return claimed
    }

    /// The claim as one statement that returns a row when it recorded the claim, so a login can
    /// send it with its reads in one round trip (`ReplayClaim.statement`). A row already there
    /// is this token's own earlier use: an expired token never gets this far, and its row's
    /// only fate is the purge.
    public func claimStatement(realmID: String, keyHash: [UInt8], expiresAt: Int64)
        -> (sql: String, parameters: [SQLValue]) {
        ("""
            INSERT INTO \(table) (expires_at, realm_id, key_hash) VALUES (?, ?, ?)
            ON CONFLICT DO NOTHING
            RETURNING expires_at
            """,
         [.integer(expiresAt), .text(realmID), .blob(keyHash)])
    }

    /// Whether the token of `keyHash` and `expiresAt` is claimed for the realm: how a login
    /// whose COMMIT went unanswered learns whether its claim committed
    /// (`Database.write(isolation:lostCommitCheck:_:)`).
    public func isClaimed(_ db: any SQLExecutor, realmID: String, keyHash: [UInt8], expiresAt: Int64) throws -> Bool {
        try db.queryOne("SELECT 1 AS claimed FROM \(table) WHERE expires_at = ? AND realm_id = ? AND key_hash = ?",
                        .integer(expiresAt), .text(realmID), .blob(keyHash)) != nil
    }

    /// How many expired rows the next claim should purge: `purgeBatchSize` at most once per
    /// `purgeIntervalSeconds` in this process, else 0.
    public func purgeBudget(now: Int64) -> Int {
        let due = lastPurge.withLock { last in
            guard now - last >= purgeIntervalSeconds else { return false }
            last = now
            return true
        }
        return due ? purgeBatchSize : 0
    }

    /// A key: SHA-256 over the length-prefixed parts, so no two part lists collide by concatenation.
    public static func key(_ parts: [[UInt8]]) -> [UInt8] {
        var input: [UInt8] = []
        for bytes in parts {
            let length = UInt32(clamping: bytes.count)
            input += [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            input += bytes
        }
        return SHA256.hash(input)
    }
}

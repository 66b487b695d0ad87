import JOSE
import Storage
import Synchronization

/// The single-use ledger of one provider's identity tokens: which keys were accepted, until
/// their token expires, across every node sharing the database. The claim is one
/// `INSERT … ON CONFLICT DO UPDATE … WHERE expired`, and the rows it changed say whether this
/// request was first; only the key's hash is stored. Each provider keys its tokens its own way
/// (`key(_:)`) in its own table (created by its migrations with `createTable`).
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

    /// The statements that create a ledger's `table`.
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

    /// Records `keyHash` for the realm until `expiresAt` inside the caller's write transaction
    /// (the login claims, resolves the account and starts the session in one commit); true on
    /// first use (or once the previous use has expired), false for a replay. Times are unix
    /// seconds. The claim holds only if that transaction commits. `purgingUpTo` comes from
    /// ``purgeBudget(now:)``, taken before the transaction (a write body may run more than once
    /// and must change nothing outside the database).
    public func claim(_ db: any SQLExecutor, realmID: String, keyHash: [UInt8], expiresAt: Int64, now: Int64,
                      purgingUpTo purgeLimit: Int) throws -> Bool {
        let statement = claimStatement(realmID: realmID, keyHash: keyHash, expiresAt: expiresAt, now: now)
        let claimed = try !db.query(statement.sql, statement.parameters).isEmpty
        if purgeLimit > 0 {
            _ = try db.execute(
                """
                DELETE FROM \(table) WHERE (realm_id, key_hash) IN (
                    SELECT realm_id, key_hash FROM \(table) WHERE expires_at <= ? LIMIT ?)
                """,
                [.integer(now), .integer(Int64(purgeLimit))])
        }
        return claimed
    }

    /// The claim as one statement that returns a row when it recorded the claim, so a login can
    /// send it with its reads in one round trip (`ReplayClaim.statement`). An existing row whose
    /// expiry has passed is free again: the update takes it over.
    public func claimStatement(realmID: String, keyHash: [UInt8], expiresAt: Int64, now: Int64)
        -> (sql: String, parameters: [SQLValue]) {
        ("""
            INSERT INTO \(table) (realm_id, key_hash, expires_at) VALUES (?, ?, ?)
            ON CONFLICT (realm_id, key_hash) DO UPDATE SET expires_at = excluded.expires_at
            WHERE \(table).expires_at <= ?
            RETURNING expires_at
            """,
         [.text(realmID), .blob(keyHash), .integer(expiresAt), .integer(now)])
    }

    /// Whether `keyHash` is claimed (unexpired) for the realm: how a login whose COMMIT went
    /// unanswered learns whether its claim committed (`Database.write(isolation:lostCommitCheck:_:)`).
    public func isClaimed(_ db: any SQLExecutor, realmID: String, keyHash: [UInt8], now: Int64) throws -> Bool {
        try db.queryOne("SELECT 1 AS claimed FROM \(table) WHERE realm_id = ? AND key_hash = ? AND expires_at > ?",
                        .text(realmID), .blob(keyHash), .integer(now)) != nil
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

import JOSE
import Storage
import Synchronization

/// Remembers which (realm, sub, nonce) triples were accepted, until their token expires, so an
/// intercepted identity token cannot be replayed (CONTRACT.md: `replayed`).
///
/// Works across several Herald nodes sharing one database: the claim is a single
/// `INSERT … ON CONFLICT DO UPDATE … WHERE expired`, and the rows it changed say whether this
/// request was first. Only SHA-256(sub, nonce) is stored, never the values themselves.
public final class AppleReplayStore: Sendable {
    /// The `apple` module's schema; apply with `Database.migrate`.
    public static let migrations: [Migration] = [
        Migration(module: "apple", version: 1, name: "apple_token_replays", statements: [
            """
            CREATE TABLE apple_token_replays (
                realm_id TEXT NOT NULL,
                key_hash BLOB NOT NULL,
                expires_at INTEGER NOT NULL,
                PRIMARY KEY (realm_id, key_hash)
            )
            """,
            "CREATE INDEX apple_token_replays_expires_at ON apple_token_replays (expires_at)",
        ]),
    ]

    private let purgeIntervalSeconds: Int64
    private let purgeBatchSize: Int
    /// Unix seconds of the last opportunistic purge by this process.
    private let lastPurge = Mutex<Int64>(0)

    /// Creates a store whose claims purge expired rows opportunistically, at most once per
    /// `purgeIntervalSeconds` and at most `purgeBatchSize` rows at a time, so a claim never
    /// pays for an unbounded delete.
    public init(purgeIntervalSeconds: Int64 = 60, purgeBatchSize: Int = 500) {
        self.purgeIntervalSeconds = purgeIntervalSeconds
        self.purgeBatchSize = purgeBatchSize
    }

    /// Records (realm, subject, nonce) until `expiresAt` inside the caller's write transaction
    /// (native login claims, resolves the account and starts the session in one commit); true
    /// when this is its first use (or the previous use has expired), false when it is a
    /// replay. Times are unix seconds. The claim holds only if that transaction commits.
    /// `purgingUpTo` expired rows are deleted with it: take it from ``purgeBudget(now:)``
    /// before the transaction, since a write body may run more than once and must change
    /// nothing outside the database.
    public func claim(_ db: any SQLExecutor, realmID: String, subject: String, nonce: String, expiresAt: Int64,
                      now: Int64, purgingUpTo purgeLimit: Int) throws -> Bool {
        let statement = Self.claimStatement(realmID: realmID, subject: subject, nonce: nonce, expiresAt: expiresAt, now: now)
        let claimed = try !db.query(statement.sql, statement.parameters).isEmpty
        if purgeLimit > 0 { _ = try Self.deleteExpired(db, now: now, limit: purgeLimit) }
        return claimed
    }

    /// The claim: a row back when it was recorded. An existing row whose expiry has passed is
    /// free again: the update takes it over.
    static func claimStatement(realmID: String, subject: String, nonce: String, expiresAt: Int64, now: Int64)
        -> (sql: String, parameters: [SQLValue]) {
        ("""
            INSERT INTO apple_token_replays (realm_id, key_hash, expires_at) VALUES (?, ?, ?)
            ON CONFLICT (realm_id, key_hash) DO UPDATE SET expires_at = excluded.expires_at
            WHERE apple_token_replays.expires_at <= ?
            RETURNING expires_at
            """,
         [.text(realmID), .blob(keyHash(subject: subject, nonce: nonce)), .integer(expiresAt), .integer(now)])
    }

    /// How many expired rows the next claim should purge: `purgeBatchSize` at most once per
    /// `purgeIntervalSeconds` in this process, else 0.
    public func purgeBudget(now: Int64) -> Int {
        shouldPurge(now: now) ? purgeBatchSize : 0
    }

    /// The stored key: SHA-256 over length-prefixed sub and nonce, so no two pairs collide by concatenation.
    static func keyHash(subject: String, nonce: String) -> [UInt8] {
        var input: [UInt8] = []
        for part in [subject, nonce] {
            let bytes = Array(part.utf8)
            let length = UInt32(clamping: bytes.count)
            input += [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            input += bytes
        }
        return SHA256.hash(input)
    }

    private func shouldPurge(now: Int64) -> Bool {
        lastPurge.withLock { last in
            guard now - last >= purgeIntervalSeconds else { return false }
            last = now
            return true
        }
    }

    private static func deleteExpired(_ db: any SQLExecutor, now: Int64, limit: Int) throws -> Int {
        try db.execute(
            """
            DELETE FROM apple_token_replays WHERE (realm_id, key_hash) IN (
                SELECT realm_id, key_hash FROM apple_token_replays WHERE expires_at <= ? LIMIT ?)
            """,
            [.integer(now), .integer(Int64(limit))])
    }
}

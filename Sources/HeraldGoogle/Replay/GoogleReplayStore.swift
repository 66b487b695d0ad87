import JOSE
import Storage
import Synchronization

/// Remembers which Google ID tokens were accepted, until they expire, so an intercepted token
/// is accepted once, across every node sharing the database (`replayed`).
///
/// A token with a nonce is keyed by (sub, nonce), as Apple's are, so a nonce serves one login
/// whichever token carries it; a token without one (a realm that does not require nonces) by
/// (sub, its signature), which is that token alone. The claim is one
/// `INSERT … ON CONFLICT DO UPDATE … WHERE expired`; only SHA-256 of the key is stored.
public final class GoogleReplayStore: Sendable {
    /// The `google-replay` module's schema; apply with `Database.migrate`.
    public static let migrations: [Migration] = [
        Migration(module: "google-replay", version: 1, name: "google_token_replays", statements: [
            """
            CREATE TABLE google_token_replays (
                realm_id TEXT NOT NULL,
                key_hash BLOB NOT NULL,
                expires_at INTEGER NOT NULL,
                PRIMARY KEY (realm_id, key_hash)
            )
            """,
            "CREATE INDEX google_token_replays_expires_at ON google_token_replays (expires_at)",
        ]),
    ]

    private let purgeIntervalSeconds: Int64
    private let purgeBatchSize: Int
    /// Unix seconds of the last opportunistic purge by this process.
    private let lastPurge = Mutex<Int64>(0)

    /// Creates a store whose claims purge at most `purgeBatchSize` expired rows, at most once
    /// per `purgeIntervalSeconds`, so a claim never pays for an unbounded delete.
    public init(purgeIntervalSeconds: Int64 = 60, purgeBatchSize: Int = 500) {
        self.purgeIntervalSeconds = purgeIntervalSeconds
        self.purgeBatchSize = purgeBatchSize
    }

    /// Records `keyHash` for the realm until `expiresAt` inside the caller's write transaction;
    /// true on first use (or once the previous use has expired), false for a replay. Times are
    /// unix seconds. `purgingUpTo` comes from ``purgeBudget(now:)``, taken before the
    /// transaction (a write body may run more than once).
    public func claim(_ db: any SQLExecutor, realmID: String, keyHash: [UInt8], expiresAt: Int64, now: Int64,
                      purgingUpTo purgeLimit: Int) throws -> Bool {
        let changed = try db.execute(
            """
            INSERT INTO google_token_replays (realm_id, key_hash, expires_at) VALUES (?, ?, ?)
            ON CONFLICT (realm_id, key_hash) DO UPDATE SET expires_at = excluded.expires_at
            WHERE google_token_replays.expires_at <= ?
            """,
            [.text(realmID), .blob(keyHash), .integer(expiresAt), .integer(now)])
        if purgeLimit > 0 {
            _ = try db.execute(
                """
                DELETE FROM google_token_replays WHERE (realm_id, key_hash) IN (
                    SELECT realm_id, key_hash FROM google_token_replays WHERE expires_at <= ? LIMIT ?)
                """,
                [.integer(now), .integer(Int64(purgeLimit))])
        }
        return changed > 0
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

    /// The stored key: SHA-256 over a kind tag and the length-prefixed subject and
    /// nonce (or signature), so no two keys collide by concatenation.
    static func keyHash(subject: String, nonce: String?, signature: [UInt8]) -> [UInt8] {
        var input: [UInt8] = []
        let parts: [[UInt8]] = if let nonce {
            [Array("nonce".utf8), Array(subject.utf8), Array(nonce.utf8)]
        } else {
            [Array("token".utf8), Array(subject.utf8), signature]
        }
        for bytes in parts {
            let length = UInt32(clamping: bytes.count)
            input += [UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF)]
            input += bytes
        }
        return SHA256.hash(input)
    }
}

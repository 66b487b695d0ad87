import Login
import Storage

/// Remembers which identity tokens were accepted, until they expire, so an intercepted token
/// cannot be replayed (`replayed`), on every node sharing the database: Apple's keys in a
/// `TokenReplayLedger` (`apple_token_replays`). A token is known by (realm, sub, nonce) and
/// the end of its acceptance (`exp` plus the leeway); only SHA-256(sub, nonce) is stored, never
/// the values themselves.
public final class AppleReplayStore: Sendable {
    /// The `apple` module's schema; apply with `Database.migrate`.
    public static let migrations: [Migration] = [
        Migration(module: "apple", version: 1, name: "apple_token_replays",
                  statements: TokenReplayLedger.createTable("apple_token_replays")),
        Migration(module: "apple", version: 2, name: "apple_token_replays keyed by expiry",
                  statements: TokenReplayLedger.rekeyByExpiry("apple_token_replays")),
    ]

    private let ledger: TokenReplayLedger

    /// A store whose claims purge expired rows at most once per `purgeIntervalSeconds`, at
    /// most `purgeBatchSize` at a time.
    public init(purgeIntervalSeconds: Int64 = 60, purgeBatchSize: Int = 500) {
        ledger = TokenReplayLedger(table: "apple_token_replays", purgeIntervalSeconds: purgeIntervalSeconds,
                                   purgeBatchSize: purgeBatchSize)
    }

    /// Records the token of (realm, subject, nonce) that is accepted until `expiresAt` inside
    /// the caller's write transaction; true on first use, false for a replay
    /// (`TokenReplayLedger.claim`).
    public func claim(_ db: any SQLExecutor, realmID: String, subject: String, nonce: String, expiresAt: Int64,
                      now: Int64, purgingUpTo purgeLimit: Int) throws -> Bool {
        try ledger.claim(db, realmID: realmID, keyHash: Self.keyHash(subject: subject, nonce: nonce),
                         expiresAt: expiresAt, now: now, purgingUpTo: purgeLimit)
    }

    /// The claim as one statement that returns a row when it recorded the claim
    /// (`TokenReplayLedger.claimStatement`).
    func claimStatement(realmID: String, subject: String, nonce: String, expiresAt: Int64)
        -> (sql: String, parameters: [SQLValue]) {
        ledger.claimStatement(realmID: realmID, keyHash: Self.keyHash(subject: subject, nonce: nonce),
                              expiresAt: expiresAt)
    }

    /// How many expired rows the next claim should purge (`TokenReplayLedger.purgeBudget`).
    public func purgeBudget(now: Int64) -> Int { ledger.purgeBudget(now: now) }

    /// Whether the token of (`subject`, `nonce`, `expiresAt`) is claimed in the realm (see `TokenReplayLedger.isClaimed`).
    func isClaimed(_ db: any SQLExecutor, realmID: String, subject: String, nonce: String, expiresAt: Int64) throws -> Bool {
        try ledger.isClaimed(db, realmID: realmID, keyHash: Self.keyHash(subject: subject, nonce: nonce),
                             expiresAt: expiresAt)
    }

    /// The stored key: SHA-256 over length-prefixed sub and nonce.
    static func keyHash(subject: String, nonce: String) -> [UInt8] {
        TokenReplayLedger.key([Array(subject.utf8), Array(nonce.utf8)])
    }
}

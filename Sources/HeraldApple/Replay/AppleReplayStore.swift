import Login
import Storage

/// Remembers which (realm, sub, nonce) triples were accepted, until their token expires, so an
/// intercepted identity token cannot be replayed (CONTRACT.md: `replayed`), on every node
/// sharing the database: Apple's keys in a `TokenReplayLedger` (`apple_token_replays`). Only
/// SHA-256(sub, nonce) is stored, never the values themselves.
public final class AppleReplayStore: Sendable {
    /// The `apple` module's schema; apply with `Database.migrate`.
    public static let migrations: [Migration] = [
        Migration(module: "apple", version: 1, name: "apple_token_replays",
                  statements: TokenReplayLedger.createTable("apple_token_replays")),
    ]

    private let ledger: TokenReplayLedger

    /// A store whose claims purge expired rows at most once per `purgeIntervalSeconds`, at
    /// most `purgeBatchSize` at a time.
    public init(purgeIntervalSeconds: Int64 = 60, purgeBatchSize: Int = 500) {
        ledger = TokenReplayLedger(table: "apple_token_replays", purgeIntervalSeconds: purgeIntervalSeconds,
                                   purgeBatchSize: purgeBatchSize)
    }

    /// Records (realm, subject, nonce) until `expiresAt` inside the caller's write transaction;
    /// true on first use (or once the previous use has expired), false for a replay
    /// (`TokenReplayLedger.claim`).
    public func claim(_ db: any SQLExecutor, realmID: String, subject: String, nonce: String, expiresAt: Int64,
                      now: Int64, purgingUpTo purgeLimit: Int) throws -> Bool {
        try ledger.claim(db, realmID: realmID, keyHash: Self.keyHash(subject: subject, nonce: nonce),
                         expiresAt: expiresAt, now: now, purgingUpTo: purgeLimit)
    }

    /// The claim as one statement that returns a row when it recorded the claim
    /// (`TokenReplayLedger.claimStatement`).
    func claimStatement(realmID: String, subject: String, nonce: String, expiresAt: Int64, now: Int64)
        -> (sql: String, parameters: [SQLValue]) {
        ledger.claimStatement(realmID: realmID, keyHash: Self.keyHash(subject: subject, nonce: nonce),
                              expiresAt: expiresAt, now: now)
    }

    /// How many expired rows the next claim should purge (`TokenReplayLedger.purgeBudget`).
    public func purgeBudget(now: Int64) -> Int { ledger.purgeBudget(now: now) }

    /// Whether the token of (`subject`, `nonce`) is claimed in the realm (see `TokenReplayLedger.isClaimed`).
    func isClaimed(_ db: any SQLExecutor, realmID: String, subject: String, nonce: String, now: Int64) throws -> Bool {
        try ledger.isClaimed(db, realmID: realmID, keyHash: Self.keyHash(subject: subject, nonce: nonce), now: now)
    }

    /// The stored key: SHA-256 over length-prefixed sub and nonce.
    static func keyHash(subject: String, nonce: String) -> [UInt8] {
        TokenReplayLedger.key([Array(subject.utf8), Array(nonce.utf8)])
    }
}

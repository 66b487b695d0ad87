import Login
import Storage

/// Remembers which Google ID tokens were accepted, until they expire, so an intercepted token
/// is accepted once, across every node sharing the database (`replayed`): Google's keys in a
/// `TokenReplayLedger` (`google_token_replays`).
///
/// A token with a nonce is keyed by (sub, nonce), as Apple's are, a token without one (a realm
/// that does not require nonces) by (sub, its signature), each with the end of its acceptance
/// (`exp` plus the leeway, `TokenReplayLedger`). Only SHA-256 of the key is stored.
public final class GoogleReplayStore: Sendable {
    /// The `google-replay` module's schema; apply with `Database.migrate`.
    public static let migrations: [Migration] = [
        Migration(module: "google-replay", version: 1, name: "google_token_replays",
                  statements: TokenReplayLedger.createTable("google_token_replays")),
        Migration(module: "google-replay", version: 2, name: "google_token_replays keyed by expiry",
                  statements: TokenReplayLedger.rekeyByExpiry("google_token_replays")),
    ]

    private let ledger: TokenReplayLedger

    /// A store whose claims purge expired rows at most once per `purgeIntervalSeconds`, at
    /// most `purgeBatchSize` at a time.
    public init(purgeIntervalSeconds: Int64 = 60, purgeBatchSize: Int = 500) {
        ledger = TokenReplayLedger(table: "google_token_replays", purgeIntervalSeconds: purgeIntervalSeconds,
                                   purgeBatchSize: purgeBatchSize)
    }

    /// Records `keyHash` for the realm until `expiresAt` inside the caller's write transaction
    /// (`TokenReplayLedger.claim`).
    public func claim(_ db: any SQLExecutor, realmID: String, keyHash: [UInt8], expiresAt: Int64, now: Int64,
                      purgingUpTo purgeLimit: Int) throws -> Bool {
        try ledger.claim(db, realmID: realmID, keyHash: keyHash, expiresAt: expiresAt, now: now, purgingUpTo: purgeLimit)
    }

    /// The claim as one statement (`TokenReplayLedger.claimStatement`).
    func claimStatement(realmID: String, keyHash: [UInt8], expiresAt: Int64) -> (sql: String, parameters: [SQLValue]) {
        ledger.claimStatement(realmID: realmID, keyHash: keyHash, expiresAt: expiresAt)
    }

    /// How many expired rows the next claim should purge (`TokenReplayLedger.purgeBudget`).
    public func purgeBudget(now: Int64) -> Int { ledger.purgeBudget(now: now) }

    /// Whether the token of `keyHash` and `expiresAt` is claimed in the realm (see `TokenReplayLedger.isClaimed`).
    func isClaimed(_ db: any SQLExecutor, realmID: String, keyHash: [UInt8], expiresAt: Int64) throws -> Bool {
        try ledger.isClaimed(db, realmID: realmID, keyHash: keyHash, expiresAt: expiresAt)
    }

    /// The stored key: a kind tag, the subject and the nonce (or the signature), length-prefixed.
    static func keyHash(subject: String, nonce: String?, signature: [UInt8]) -> [UInt8] {
        if let nonce { return TokenReplayLedger.key([Array("nonce".utf8), Array(subject.utf8), Array(nonce.utf8)]) }
        return TokenReplayLedger.key([Array("token".utf8), Array(subject.utf8), signature])
    }
}

import Foundation
import JOSE
import Realms
import Storage

/// Apple refresh tokens, kept only to revoke the user's authorization when the account is
/// deleted, by an operator or by its owner (Apple's account-deletion requirement). Sealed under
/// the master key bound to realm and client id; never returned or logged.
///
/// Both doors hand a token over through one entry point, `keep(_:realmID:accountID:clientID:)`:
/// a native login's authorization code goes into a durable exchange queue (Apple is called
/// later, see `exchangeDue`), a web login's refresh token (its exchange already happened) is
/// stored at once. A delete moves the account's tokens into a revocation queue in the delete's
/// own transaction (`accountDeleted`) and marks codes still waiting, so their tokens follow
/// them there; `revokeDue` then calls Apple, backing off on failure. Both queues survive a
/// restart; HeraldServer's background work drains them and is woken through `queueChanged` when
/// something is queued. Nodes may revoke one row concurrently: Apple's revoke is idempotent, so
/// that costs a call, not correctness.
public struct AppleTokenVault: AccountDeletionHook {
    /// The `apple-tokens` module's schema.
    public static let migrations: [Migration] = [
        Migration(module: "apple-tokens", version: 1, name: "apple refresh tokens and revocations", statements: [
            """
            CREATE TABLE apple_refresh_tokens (
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                sealed_token BLOB NOT NULL,
                stored_at INTEGER NOT NULL,
                PRIMARY KEY (realm_id, account_id, client_id)
            )
            """,
            """
            CREATE TABLE apple_token_revocations (
                id TEXT PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                sealed_token BLOB NOT NULL,
                attempts INTEGER NOT NULL,
                next_attempt_at INTEGER NOT NULL,
                last_failure TEXT,
                queued_at INTEGER NOT NULL
            )
            """,
            "CREATE INDEX apple_token_revocations_due ON apple_token_revocations (next_attempt_at)",
        ]),
        // Native logins' authorization codes waiting to be exchanged; a code is a secret, so it
        // is sealed like a refresh token.
        Migration(module: "apple-tokens", version: 2, name: "apple code exchange queue", statements: [
            """
            CREATE TABLE apple_code_exchanges (
                id TEXT PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                sealed_code BLOB NOT NULL,
                attempts INTEGER NOT NULL,
                next_attempt_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                last_failure TEXT,
                queued_at INTEGER NOT NULL
            )
            """,
            "CREATE INDEX apple_code_exchanges_due ON apple_code_exchanges (next_attempt_at)",
        ]),
        // A code still waiting for its exchange when its account is deleted: the refresh token
        // Apple returns for it is queued for revocation instead of stored.
        Migration(module: "apple-tokens", version: 3, name: "revoke after exchange", statements: [
            "ALTER TABLE apple_code_exchanges ADD COLUMN revoke_after_exchange INTEGER NOT NULL DEFAULT 0",
        ]),
        // The realm overview counts one realm's queued revocations (`AppleRealmActivity`).
        Migration(module: "apple-tokens", version: 4, name: "revocations by realm", statements: [
            "CREATE INDEX apple_token_revocations_realm ON apple_token_revocations (realm_id)",
        ]),
    ]

    /// What an account deletion did with the account's Apple tokens (the owner's `DELETE /me`
    /// answers it as `appleTokenRevocation`; the deletion event records it as its `reason`).
    public enum RevocationOutcome: String, Sendable {
        /// A stored refresh token, or a code still waiting for its exchange, is queued durably
        /// for revocation at Apple (retried with backoff).
        case queued
        /// Herald kept no Apple token for the account (no `authorizationCode` was ever sent, or
        /// its exchange failed).
        case notStored = "not_stored"
        /// The realm has no Team ID, Key ID and `.p8` key for Apple's REST calls, so Apple cannot
        /// be called now; anything stored is still queued, for when a key is configured.
        case notConfigured = "not_configured"
    }

    /// What a door hands over for an account: Apple's authorization code (native login; to be
    /// exchanged) or a refresh token from an exchange the door already made (web flow).
    public enum Source: Sendable {
        case authorizationCode(String)
        case refreshToken(String)
    }

    /// After this many failed attempts a revocation is left in the queue for an operator.
    public static let maximumAttempts: Int64 = 12
    /// Revocations attempted per `revokeDue` call.
    static let batchSize = 20

    /// What one `revokeDue` call did.
    public struct RevocationRound: Sendable, Equatable {
        public var revoked = 0
        public var failed = 0
        /// Failures that used the last attempt.
        public var abandoned = 0
    }

    let database: any Database
    let masterKey: MasterKey
    private let credentials: AppleCredentials
    private let apple: AppleAPIClient
    let now: @Sendable () -> Date
    /// Called after something was queued (an exchange, or revocations after a delete), so
    /// whoever drains the queues starts now rather than at its next poll.
    let queueChanged: @Sendable () -> Void

    public init(database: any Database, masterKey: MasterKey, apple: AppleAPIClient, now: @escaping @Sendable () -> Date,
                queueChanged: @escaping @Sendable () -> Void = {}) {
        self.database = database
        self.masterKey = masterKey
        credentials = AppleCredentials(database: database, masterKey: masterKey, now: now)
        self.apple = apple
        self.now = now
        self.queueChanged = queueChanged
    }

    /// Keeps Apple's token for the account, from either door: a code is queued for exchange (one
    /// short write; the exchange happens in the background and survives a restart), a refresh
    /// token is stored now, replacing an older one. `clientID` is the app Apple issued it to.
    public func keep(_ source: Source, realmID: String, accountID: String,
                     clientID: String) async -> Result<Void, AppleAPIFailure> {
        switch source {
        case .authorizationCode(let code):
            return await enqueueExchange(code: code, realmID: realmID, accountID: accountID, clientID: clientID)
        case .refreshToken(let token):
            return await keep(refreshToken: token, realmID: realmID, accountID: accountID, clientID: clientID)
        }
    }

    /// Tells the queues' worker that revocations were queued (by a delete that has committed).
    public func revocationsQueued() {
        queueChanged()
    }

    /// Exchanges a native login's authorization code (issued to `clientID`, the token's
    /// audience) for Apple's refresh token, not yet stored.
    func exchange(code: String, realmID: String, clientID: String) async -> Result<String, AppleAPIFailure> {
        let secret: String
        switch await credentials.clientSecret(realmID: realmID, clientID: clientID) {
        case .failure(let failure): return .failure(failure)
        case .success(let value): secret = value
        }
        switch await apple.exchange(code: code, clientID: clientID, clientSecret: secret) {
        case .failure(let failure): return .failure(failure)
        case .success(let grant):
            guard let refreshToken = grant.refreshToken, !refreshToken.isEmpty, refreshToken.utf8.count <= 4096 else {
                return .failure(.invalid)
            }
            return .success(refreshToken)
        }
    }

    /// Keeps Apple's refresh token for the account (a web-flow exchange already made the call).
    private func keep(refreshToken: String, realmID: String, accountID: String,
                      clientID: String) async -> Result<Void, AppleAPIFailure> {
        guard !refreshToken.isEmpty, refreshToken.utf8.count <= 4096 else { return .failure(.invalid) }
        do {
            try await database.write { db in
                try store(refreshToken: refreshToken, realmID: realmID, accountID: accountID, clientID: clientID, in: db)
            }
            return .success(())
        } catch {
            return .failure(.storage)
        }
    }

    /// Stores Apple's refresh token for the account, sealed, replacing an older one.
    func store(refreshToken: String, realmID: String, accountID: String, clientID: String,
               in db: any SQLExecutor) throws {
        let sealed = seal(refreshToken: refreshToken, realmID: realmID, clientID: clientID)
        try db.execute("""
            INSERT INTO apple_refresh_tokens (realm_id, account_id, client_id, sealed_token, stored_at)
            VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (realm_id, account_id, client_id) DO UPDATE SET sealed_token = excluded.sealed_token,
                stored_at = excluded.stored_at
            """, .text(realmID), .text(accountID), .text(clientID), .blob(sealed), .integer(now().unixSeconds))
    }

    /// Queues the account's Apple tokens for revocation, inside the delete's transaction, and
    /// says what it did (a ``RevocationOutcome``'s raw value). A code still waiting for its
    /// exchange is marked so that its token is revoked as soon as Apple returns it; it is marked
    /// before the stored tokens are read, so an exchange committing meanwhile is seen by one or
    /// the other.
    public func accountDeleted(realmID: String, accountID: String, at: Int64, in db: any SQLExecutor) throws -> String {
        let pending = try db.execute("""
            UPDATE apple_code_exchanges SET revoke_after_exchange = 1 WHERE realm_id = ? AND account_id = ?
            """, .text(realmID), .text(accountID))
        let rows = try db.query("SELECT client_id, sealed_token FROM apple_refresh_tokens WHERE realm_id = ? AND account_id = ?",
                                .text(realmID), .text(accountID))
        for row in rows {
            try Self.queueRevocation(db, realmID: realmID, clientID: try row.string("client_id"),
                                     sealed: try row.bytes("sealed_token"), at: at)
        }
        try db.execute("DELETE FROM apple_refresh_tokens WHERE realm_id = ? AND account_id = ?", .text(realmID), .text(accountID))
        let outcome: RevocationOutcome
        if let config = try AppleProviderStore.load(db, realmID: realmID), config.teamId != nil, config.keyId != nil,
           config.privateKeyConfigured {
            outcome = rows.isEmpty && pending == 0 ? .notStored : .queued
        } else {
            outcome = .notConfigured
        }
        return outcome.rawValue
    }

    /// Queues one sealed refresh token for revocation, due now.
    static func queueRevocation(_ db: any SQLExecutor, realmID: String, clientID: String, sealed: [UInt8], at: Int64) throws {
        try db.execute("""
            INSERT INTO apple_token_revocations (id, realm_id, client_id, sealed_token, attempts, next_attempt_at, queued_at)
            VALUES (?, ?, ?, ?, 0, ?, ?)
            """, .text(SecureRandom.token(byteCount: 16)), .text(realmID), .text(clientID), .blob(sealed), .integer(at),
            .integer(at))
    }

    /// Deletes the account's stored Apple refresh tokens without revoking them, inside the
    /// caller's transaction: for when Apple itself has already ended them (its `account-delete`
    /// and `consent-revoked` notifications), so a revocation call would be pointless and the
    /// sealed tokens must not outlive the authorization they stood for. Codes still queued for
    /// the account are dropped too: their tokens would belong to an account that is gone.
    public static func forget(_ db: any SQLExecutor, realmID: String, accountID: String) throws {
        try db.execute("DELETE FROM apple_refresh_tokens WHERE realm_id = ? AND account_id = ?", .text(realmID), .text(accountID))
        try db.execute("DELETE FROM apple_code_exchanges WHERE realm_id = ? AND account_id = ?", .text(realmID), .text(accountID))
    }

    /// Calls Apple for the revocations that are due: a success removes the row, a failure
    /// schedules the next attempt (1 min, doubling, at most a day) until `maximumAttempts`.
    public func revokeDue() async throws -> RevocationRound {
        let at = now().unixSeconds
        let due = try await database.read { db in
            try db.query("""
                SELECT id, realm_id, client_id, sealed_token, attempts FROM apple_token_revocations
                WHERE next_attempt_at <= ? AND attempts < ? ORDER BY next_attempt_at LIMIT ?
                """, .integer(at), .integer(Self.maximumAttempts), .integer(Int64(Self.batchSize))).map { row in
                (id: try row.string("id"), realmID: try row.string("realm_id"), clientID: try row.string("client_id"),
                 sealed: try row.bytes("sealed_token"), attempts: try row.int("attempts"))
            }
        }
        var round = RevocationRound()
        for item in due {
            let outcome = await revoke(realmID: item.realmID, clientID: item.clientID, sealed: item.sealed)
            if case .failure(let failure) = outcome {
                let attempts = item.attempts + 1
                let delay = min(Int64(60) << min(attempts - 1, 20), 86_400)
                try await database.write { db in
                    try db.execute("""
                        UPDATE apple_token_revocations SET attempts = ?, next_attempt_at = ?, last_failure = ? WHERE id = ?
                        """, .integer(attempts), .integer(at + delay), .text(failure.rawValue), .text(item.id))
                }
                round.failed += 1
                if attempts >= Self.maximumAttempts { round.abandoned += 1 }
            } else {
                try await database.write { db in
                    try db.execute("DELETE FROM apple_token_revocations WHERE id = ?", .text(item.id))
                }
                round.revoked += 1
            }
            // Shutting down: the rows left are due again at the next start.
            if Task.isCancelled { break }
        }
        return round
    }

    /// The earliest time (unix seconds) a queued exchange or revocation is due, nil when both
    /// queues are empty (or hold only abandoned revocations).
    public func nextDue() async throws -> Int64? {
        try await database.read { db in
            let exchange = try db.queryOne("SELECT MIN(next_attempt_at) AS due FROM apple_code_exchanges")?.optionalInt("due")
            let revocation = try db.queryOne("SELECT MIN(next_attempt_at) AS due FROM apple_token_revocations WHERE attempts < ?",
                                             .integer(Self.maximumAttempts))?.optionalInt("due")
            return [exchange, revocation].compactMap { $0 }.min()
        }
    }

    private func revoke(realmID: String, clientID: String, sealed: [UInt8]) async -> Result<Void, AppleAPIFailure> {
        guard let plain = try? masterKey.open(sealed, context: Self.sealContext(realmID, clientID)) else {
            return .failure(.notConfigured)
        }
        switch await credentials.clientSecret(realmID: realmID, clientID: clientID) {
        case .failure(let failure): return .failure(failure)
        case .success(let secret):
            return await apple.revoke(refreshToken: String(decoding: plain, as: UTF8.self), clientID: clientID,
                                      clientSecret: secret)
        }
    }

    func seal(refreshToken: String, realmID: String, clientID: String) -> [UInt8] {
        masterKey.seal(Array(refreshToken.utf8), context: Self.sealContext(realmID, clientID))
    }

    static func sealContext(_ realmID: String, _ clientID: String) -> String { "apple-refresh-token:\(realmID):\(clientID)" }
}

import Foundation
import JOSE
import Storage

/// The queue of native logins' authorization codes (`apple_code_exchanges`). A login only
/// queues its code, in one short write, and answers; `exchangeDue` calls Apple later, so a slow
/// Apple never holds up a login and a restart loses nothing. Apple's codes are valid for five
/// minutes: a code not exchanged by then is dropped and counted as abandoned.
extension AppleTokenVault {
    /// How long Apple accepts an authorization code.
    public static let codeLifetimeSeconds: Int64 = 300
    /// The wait after the first failed exchange; it doubles with every further failure.
    static let firstExchangeRetrySeconds: Int64 = 5
    /// How long a node that took a row keeps other nodes off it (a call lasts at most 10 s).
    static let exchangeClaimSeconds: Int64 = 30
    /// Exchanges attempted per `exchangeDue` call.
    static let exchangeBatchSize = 20

    /// What became of one queued exchange in an `exchangeDue` call.
    public struct ExchangeAttempt: Sendable, Equatable {
        public enum Outcome: Sendable, Equatable {
            /// Apple answered; its refresh token is stored (or queued for revocation, when the
            /// account was deleted while the code waited).
            case kept
            /// Apple could not be used; the exchange is tried again after a backoff.
            case retrying(AppleAPIFailure)
            /// Apple refused (or the code cannot be used): the exchange is dropped.
            case refused(AppleAPIFailure)
            /// The code expired before an attempt succeeded: the exchange is dropped. `failure`
            /// is the last attempt's, nil when the code expired without a new call.
            case abandoned(AppleAPIFailure?)
        }
        public let realmID: String
        public let clientID: String
        public let outcome: Outcome
    }

    /// Queues a native login's code for exchange (sealed like a refresh token) and wakes the worker.
    func enqueueExchange(code: String, realmID: String, accountID: String,
                         clientID: String) async -> Result<Void, AppleAPIFailure> {
        guard !code.isEmpty, code.utf8.count <= 4096 else { return .failure(.invalid) }
        let sealed = masterKey.seal(Array(code.utf8), context: Self.codeSealContext(realmID, clientID))
        let at = now().unixSeconds
        do {
            try await database.write { db in
                try db.execute("""
                    INSERT INTO apple_code_exchanges (id, realm_id, account_id, client_id, sealed_code, attempts,
                        next_attempt_at, expires_at, queued_at)
                    VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)
                    """, .text(SecureRandom.token(byteCount: 16)), .text(realmID), .text(accountID), .text(clientID),
                    .blob(sealed), .integer(at), .integer(at + Self.codeLifetimeSeconds), .integer(at))
            }
        } catch {
            return .failure(.storage)
        }
        queueChanged()
        return .success(())
    }

    /// Exchanges the queued codes that are due: a success stores Apple's refresh token and
    /// removes the row; Apple's refusal removes it (trying again gives the same answer); any
    /// other failure retries after 5 s, doubling, until the code has expired. Stops early,
    /// leaving rows as they were, when the calling task is cancelled (shutdown).
    public func exchangeDue() async throws -> [ExchangeAttempt] {
        let at = now().unixSeconds
        let due = try await database.read { db in
            try db.query("""
                SELECT id, realm_id, account_id, client_id, sealed_code, attempts, next_attempt_at, expires_at
                FROM apple_code_exchanges WHERE next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?
                """, .integer(at), .integer(Int64(Self.exchangeBatchSize))).map { row in
                QueuedExchange(id: try row.string("id"), realmID: try row.string("realm_id"),
                               accountID: try row.string("account_id"), clientID: try row.string("client_id"),
                               sealed: try row.bytes("sealed_code"), attempts: try row.int("attempts"),
                               nextAttemptAt: try row.int("next_attempt_at"), expiresAt: try row.int("expires_at"))
            }
        }
        var attempts: [ExchangeAttempt] = []
        for item in due {
            if Task.isCancelled { break }
            guard item.expiresAt > at else {
                try await delete(item.id)
                attempts.append(ExchangeAttempt(realmID: item.realmID, clientID: item.clientID, outcome: .abandoned(nil)))
                continue
            }
            // Another node may have taken it since the read: only the one whose claim lands calls Apple.
            guard try await claim(item, at: at) else { continue }
            guard let code = try? masterKey.open(item.sealed, context: Self.codeSealContext(item.realmID, item.clientID)) else {
                // Sealed under another master key: no attempt can ever read it.
                try await delete(item.id)
                attempts.append(ExchangeAttempt(realmID: item.realmID, clientID: item.clientID, outcome: .refused(.notConfigured)))
                continue
            }
            let result = await exchange(code: String(decoding: code, as: UTF8.self), realmID: item.realmID,
                                        clientID: item.clientID)
            if Task.isCancelled, case .failure = result {
                // Cut short by shutdown: not an attempt. The next start tries again while the code lasts.
                try await database.write { db in
                    try db.execute("UPDATE apple_code_exchanges SET next_attempt_at = ? WHERE id = ?",
                                   .integer(item.nextAttemptAt), .text(item.id))
                }
                break
            }
            let outcome: ExchangeAttempt.Outcome
            switch result {
            case .success(let refreshToken):
                // One transaction: the token is kept exactly when the code leaves the queue, and
                // not when the row is already gone (Apple's own notification ended the account).
                // When the account was deleted meanwhile, the token goes to the revocation queue.
                let sealed = seal(refreshToken: refreshToken, realmID: item.realmID, clientID: item.clientID)
                try await database.write { db in
                    guard let row = try db.queryOne("DELETE FROM apple_code_exchanges WHERE id = ? RETURNING revoke_after_exchange",
                                                    .text(item.id)) else { return }
                    if try row.int("revoke_after_exchange") != 0 {
                        try Self.queueRevocation(db, realmID: item.realmID, clientID: item.clientID, sealed: sealed, at: at)
                    } else {
                        try store(refreshToken: refreshToken, realmID: item.realmID, accountID: item.accountID,
                                  clientID: item.clientID, in: db)
                    }
                }
                outcome = .kept
            case .failure(let failure) where failure.isRefusal:
                try await delete(item.id)
                outcome = .refused(failure)
            case .failure(let failure):
                let attempt = item.attempts + 1
                let next = now().unixSeconds + min(Self.firstExchangeRetrySeconds << min(attempt - 1, 20),
                                                   Self.codeLifetimeSeconds)
                if next >= item.expiresAt {
                    try await delete(item.id)
                    outcome = .abandoned(failure)
                } else {
                    try await database.write { db in
                        try db.execute("""
                            UPDATE apple_code_exchanges SET attempts = ?, next_attempt_at = ?, last_failure = ? WHERE id = ?
                            """, .integer(attempt), .integer(next), .text(failure.rawValue), .text(item.id))
                    }
                    outcome = .retrying(failure)
                }
            }
            attempts.append(ExchangeAttempt(realmID: item.realmID, clientID: item.clientID, outcome: outcome))
        }
        return attempts
    }

    /// Moves the row's next attempt past the call, if no other node did since it was read.
    private func claim(_ item: QueuedExchange, at: Int64) async throws -> Bool {
        try await database.write { db in
            try db.execute("UPDATE apple_code_exchanges SET next_attempt_at = ? WHERE id = ? AND next_attempt_at = ?",
                           .integer(at + Self.exchangeClaimSeconds), .text(item.id), .integer(item.nextAttemptAt)) == 1
        }
    }

    private func delete(_ id: String) async throws {
        try await database.write { db in
            try db.execute("DELETE FROM apple_code_exchanges WHERE id = ?", .text(id))
        }
    }

    static func codeSealContext(_ realmID: String, _ clientID: String) -> String { "apple-authorization-code:\(realmID):\(clientID)" }
}

/// One row of `apple_code_exchanges`, as `exchangeDue` reads it.
private struct QueuedExchange: Sendable {
    let id: String
    let realmID: String
    let accountID: String
    let clientID: String
    let sealed: [UInt8]
    let attempts: Int64
    let nextAttemptAt: Int64
    let expiresAt: Int64
}

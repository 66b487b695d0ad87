import Foundation
import Grants
import Realms
import Storage
import TokenIssuer

/// The token endpoint's `authorization_code` grant (RFC 6749 §4.1.3, S256 PKCE), after client
/// authentication: one write transaction burns the code (Grants), starts the account's session
/// (TokenIssuer's `SessionStore`) and records that session on the code (Grants). A replay, even one racing the
/// first redemption, therefore always finds the session to revoke.
public struct AuthorizationCodeExchange: Sendable {
    /// What the exchange ended in when it did not throw.
    public enum Outcome: Sendable {
        case issued(IssuedTokens)
        /// The code was used before: the session its first redemption started is revoked and
        /// the reuse recorded (RFC 6749 §4.1.2). Answer `invalid_grant`.
        case replayed
    }

    /// What the exchange transaction decided. Refusals and replays are returned, not thrown,
    /// so the burnt code (and a replay's revocation) commit.
    private enum Step: Sendable {
        case granted(PreparedSession)
        case refused(GrantsError)
        /// The code was used before; the session it started (if any) is revoked.
        case replayed(sessionID: String?)

        /// Whether the exchange that answered this committed, read after its COMMIT went
        /// unanswered (a failover): a grant by its session (random id, stored by this exchange
        /// alone), a replay by the revocation. A refusal is answered as it is: it only burnt
        /// the code, and a retry of a refused exchange is refused either way.
        func isCommitted(in db: any SQLExecutor) throws -> Bool {
            switch self {
            case .granted(let prepared): try SessionStore.isStored(prepared, in: db)
            case .replayed(let sessionID?): try SessionStore.isRevoked(sessionID: sessionID, in: db)
            case .replayed(nil), .refused: true
            }
        }
    }

    /// The refusal of a code whose account was disabled or deleted since it was issued.
    private static let accountGone = GrantsError(.invalidGrant, "the account can no longer sign in")

    private let database: any Database
    private let codes: AuthorizationCodes
    private let sessions: SessionStore
    private let now: @Sendable () -> Date

    /// An exchange of `codes` for sessions started by `sessions`, in `database`.
    public init(database: any Database, codes: AuthorizationCodes, sessions: SessionStore,
                now: @escaping @Sendable () -> Date) {
        self.database = database
        self.codes = codes
        self.sessions = sessions
        self.now = now
    }

    /// Exchanges `code` for `client` (authenticated). Throws `GrantsError` for a refused code
    /// (`invalid_grant`) and storage errors unchanged (nothing committed). `settingsStamp`: the
    /// realm's `RealmSettingsVersion` when the caller read `realm` and `client`, perhaps from
    /// memory; a realm whose stamp differs now throws `TokenError(.settingsChanged)` and changes
    /// nothing (the code stays unburnt for the caller's retry from what is stored).
    public func exchange(realm: Realm, client: ClientApp, code: String, redirectURI: String, codeVerifier: String,
                         clientIP: String, settingsStamp: String? = nil) async throws -> Outcome {
        let codes = self.codes
        let sessions = self.sessions
        let at = now().unixSeconds
        // READ COMMITTED on PostgreSQL: single use rests on the redemption's conditional UPDATE.
        // A concurrent redemption of the same code waits for this transaction, then matches no
        // row and reads the committed one as a replay, with the session recorded here.
        let step = try await database.write(isolation: .readCommitted, lostCommitCheck: { step, db in
            try step.isCommitted(in: db)
        }) { db -> Step in
            // One round trip on PostgreSQL: the realm's stamp, the burn, the code's account and
            // the realm's signing key (unless remembered under that stamp); the session's writes
            // then travel with COMMIT.
            let burn = codes.burn(realmID: realm.id, clientID: client.clientId, code: code)
            let stampRead = settingsStamp.map { _ in [RealmSettingsVersion.currentStatement(realmID: realm.id)] } ?? []
            let keyLookup = sessions.activeKeyLookup(realmID: realm.id, settingsStamp: settingsStamp)
            let batch = try db.queryBatch(stampRead + [
                burn.statement,
                AccountStore.loadStatement(realmID: realm.id, idSelectedBy: burn.accountIDQuery),
            ] + keyLookup.statements)
            // Before anything is decided on the client: thrown, so the burn rolls back.
            if let settingsStamp, try RealmSettingsVersion.current(fromRows: batch[0]) != settingsStamp {
                throw TokenError(.settingsChanged)
            }
            let answers = Array(batch.dropFirst(stampRead.count))
            let grant: AuthorizationCodeGrant
            switch try codes.redeem(in: db, burn, burntRows: answers[0], client: client, redirectURI: redirectURI,
                                    codeVerifier: codeVerifier) {
            case .granted(let granted):
                grant = granted
            case .rejected(let error):
                return .refused(error)
            case .replayed(let sessionID):
                if let sessionID { try sessions.revokeSession(in: db, realmID: realm.id, sessionID: sessionID) }
                // Committed with the revocation it reports.
                try SecurityEventLog.record(db, NewSecurityEvent(
                    realmID: realm.id, type: .authorizationCodeReused, at: at, reason: "session_revoked",
                    clientID: client.clientId, sessionID: sessionID, clientIP: clientIP))
                return .replayed(sessionID: sessionID)
            }
            // The code stays burnt when its account can no longer sign in: it was worth one attempt.
            guard let account = try answers[1].first.map(AccountStore.account(from:)) else {
                return .refused(Self.accountGone)
            }
            // The client's scopes may have been narrowed since /authorize: grant what it still allows.
            let scope = grant.scope.filter(client.allowedScopes.contains)
            let prepared: PreparedSession
            do {
                prepared = try sessions.startSession(in: db, SessionRequest(
                    realm: realm, client: client, accountID: grant.accountID, scope: scope, clientIP: clientIP,
                    authTime: grant.authTime, nonce: grant.nonce), account: account, answer: .tokenEndpoint,
                    signingKey: keyLookup.answered(by: answers.dropFirst(2)))
            } catch let error as TokenError where error.code == .accountDisabled || error.code == .accountDeleted {
                return .refused(Self.accountGone)
            }
            try codes.recordSession(in: db, prepared.sessionID, for: grant)
            return .granted(prepared)
        }
        switch step {
        case .granted(let prepared): return .issued(try sessions.issue(prepared))
        case .refused(let error): throw error
        case .replayed: return .replayed
        }
    }
}

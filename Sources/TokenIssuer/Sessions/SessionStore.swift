import Foundation
import JOSE
import Realms
import Storage

/// Sessions and the tokens they hand out: a session is one refresh family per login, bound
/// to its client (and IP when the client asks for it), with an absolute expiry and, when the
/// realm or client sets `refreshIdleTTL`, an idle deadline each refresh moves on. Refresh
/// rotates the token; a rotated token presented again revokes the whole family. The session
/// row is what `AccessTokenVerifier` reads, so a revoked session ends its access tokens at once.
public struct SessionStore: Sendable {
    private let database: any Database
    private let signer: TokenSigner
    private let now: @Sendable () -> Date

    /// Sessions in `database`, their tokens signed by `signer` (one per process: it caches keys).
    public init(database: any Database, signer: TokenSigner, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.signer = signer
        self.now = now
    }

    // MARK: - Sessions

    /// Writes a new session and its first refresh token inside the caller's write transaction
    /// (the login commits it with the account resolution, the code exchange with the burnt
    /// code), and opens the realm's
    /// signing key there too, so a key that cannot be opened undoes the session rather than
    /// leaving one nobody got tokens for. Signing itself is left to ``issue(_:)``, after the
    /// commit, so the writer is not held for it. Throws `TokenError` (`accountDisabled`,
    /// `accountDeleted`, `noSigningKey`), a storage error, or a key-opening error.
    /// `account` is the request's account as the caller already read it in this transaction
    /// (native login's resolution), which spares reading it again; nil reads it here.
    /// `answer` says what else is issued: the first-party answer's profile (the account's
    /// identities: `identities` when the caller read them with the account, else read here) or
    /// the token endpoint's ID token. `signingKey`: the caller's `activeKeyLookup` answered in
    /// this transaction (its statement sent with the caller's first reads, or the key
    /// remembered); nil reads the key here.
    public func startSession(in db: any SQLExecutor, _ request: SessionRequest, account: Account? = nil,
                             identities: [Identity]? = nil, answer: SessionAnswer,
                             signingKey: ActiveKeyLookup.Answer? = nil) throws -> PreparedSession {
        precondition(account == nil || account?.id == request.accountID, "the account of another session request")
        let started = now()
        let at = started.unixSeconds
        let sessionID = SessionID.make(at: started)
        let refreshToken = RefreshToken.make(at: started)
        let expiresAt = at + Int64(request.refreshTokenTTL)
        let idleExpiresAt = request.refreshIdleTTL.map { at + Int64($0) }
        guard let account = try account ?? AccountStore.load(db, realmID: request.realmID, id: request.accountID) else {
            throw TokenError(.accountDeleted)
        }
        switch account.status {
        case .active: break
        case .disabled: throw TokenError(.accountDisabled)
        case .deleted: throw TokenError(.accountDeleted)
        }
        let key = try signingKey?.key() ?? SealedSigningKey.active(db, realmID: request.realmID)
        // Cached after the first use of a kid; the first open is one AES-GCM open and a parse.
        try signer.open(key, realmID: request.realmID, at: at)
        // Deferred: on PostgreSQL both inserts travel with the transaction's next statement
        // or its COMMIT, in one round trip; a failure still fails the whole transaction.
        try db.executeDeferred("""
            INSERT INTO sessions (id, realm_id, client_id, client_instance, account_id, scope, client_ip, ip_binding,
                auth_time, access_token_ttl, created_at, expires_at, refresh_idle_ttl, idle_expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(sessionID), .text(request.realmID), .text(request.clientID), .text(request.clientInstanceID),
            .text(request.accountID), .text(request.scope.joined(separator: " ")), .text(request.clientIP),
            SQLValue(request.ipBinding), .integer(request.authTime), .integer(Int64(request.accessTokenTTL)),
            .integer(at), .integer(expiresAt), request.refreshIdleTTL.map { .integer(Int64($0)) } ?? .null,
            idleExpiresAt.map { .integer($0) } ?? .null)
        try Self.insert(db, refreshToken, sessionID: sessionID, at: at)
        let session = SessionSnapshot(id: sessionID, realmID: request.realmID, clientID: request.clientID,
                                      clientInstanceID: request.clientInstanceID, accountID: request.accountID, scope: request.scope, authTime: request.authTime,
                                      accessTokenTTL: request.accessTokenTTL, expiresAt: expiresAt,
                                      refreshIdleTTL: request.refreshIdleTTL, idleExpiresAt: idleExpiresAt)
        return PreparedSession(session: session,
                               material: try Self.material(db, key: key, account: account, identities: identities, answer: answer),
                               refreshToken: refreshToken.text, nonce: request.nonce, at: at)
    }

    /// How a transaction that confirms the realm's `settingsStamp` learns the realm's active
    /// signing key for `startSession`: remembered from an earlier transaction that confirmed the
    /// same stamp, or read by the lookup's statement (sent after the stamp's read). nil: no
    /// stamp is confirmed, and the key is always read.
    public func activeKeyLookup(realmID: String, settingsStamp: String?) -> ActiveKeyLookup {
        ActiveKeyLookup(realmID: realmID, stamp: settingsStamp, at: now().unixSeconds, memory: signer.activeKeys)
    }

    /// Signs the access (and ID) token of a session written by ``startSession(in:_:)``; call
    /// it after that transaction committed.
    public func issue(_ prepared: PreparedSession) throws -> IssuedTokens {
        try signer.sign(session: prepared.session, scope: prepared.session.scope, material: prepared.material,
                        refreshToken: prepared.refreshToken, nonce: prepared.nonce, at: prepared.at)
    }

    /// Whether `prepared`'s session is stored: how a login whose COMMIT went unanswered learns
    /// whether it committed (the session id is random, so only that login could have stored it).
    public static func isStored(_ prepared: PreparedSession, in db: any SQLExecutor) throws -> Bool {
        try db.queryOne("SELECT 1 AS stored FROM sessions WHERE id = ?", .text(prepared.sessionID)) != nil
    }

    /// Whether the session is revoked (read by a code exchange whose COMMIT went unanswered).
    public static func isRevoked(sessionID: String, in db: any SQLExecutor) throws -> Bool {
        try db.queryOne("SELECT 1 AS revoked FROM sessions WHERE id = ? AND revoked_at IS NOT NULL", .text(sessionID)) != nil
    }

    /// The refresh transaction's read: the token and its session with its account and its
    /// client's standing, joined through the fragments Realms publishes for them; for the
    /// first-party answer (`refreshProfileLookupSQL`) with the account's identities too, one row
    /// per identity.
    private static let refreshLookupSQL = refreshLookup(withIdentities: false)
    private static let refreshProfileLookupSQL = refreshLookup(withIdentities: true)

    private static func refreshLookup(withIdentities: Bool) -> String {
        """
        SELECT s.*, r.rotated_at, r.verifier_hash, \(AccountStanding.accountColumns), \(ClientStanding.columns)
            \(withIdentities ? ", " + AccountStanding.identityColumns : "")
        FROM refresh_tokens r
        JOIN sessions s ON s.id = r.session_id
        \(AccountStanding.join(accountColumn: "s.account_id"))
        \(ClientStanding.join(realmColumn: "s.realm_id", clientColumn: "s.client_id"))
        \(withIdentities ? AccountStanding.identitiesJoin : "")
        WHERE r.token_hash = ?
        """
    }

    /// Rotates a refresh token: the presented one dies and a new one is returned with a new
    /// access token. A rotated token presented again revokes its whole session (`reuseDetected`).
    /// The session's client is read with it: a disabled, deleted or re-created client ends the
    /// session (`revoked`), the session API serves only public first-party clients
    /// (`clientNotAllowed`), and the session keeps only the scopes its client still allows
    /// (the narrowing is stored). `scope` may narrow the new access token's scope further.
    /// A session past its idle deadline is `idleExpired`; a rotation moves the deadline on.
    /// The session API's refresh also returns the account's profile (`IssuedTokens.profile`).
    /// `settingsStamp`: the realm's `RealmSettingsVersion` when the caller read what it decided
    /// on before this call (the realm, the client it authenticated), perhaps from memory; a
    /// realm whose stamp differs now refuses with `settingsChanged` and changes nothing.
    public func refresh(realmID: String, presenter: RefreshPresenter, refreshToken: String, scope: [String]?,
                        clientIP: String, settingsStamp: String? = nil) async throws(TokenError) -> IssuedTokens {
        let started = now()
        let at = started.unixSeconds
        guard let presented = RefreshToken(presented: refreshToken) else { throw TokenError(.invalidGrant) }
        let replacement = RefreshToken.make(at: started)
        let step: RefreshStep
        do {
            // READ COMMITTED on PostgreSQL: single use rests on the conditional UPDATE below (a
            // concurrent rotation makes it change no row, which is reuse), not on SERIALIZABLE,
            // whose index-page locks made refreshes of unrelated sessions fail each other.
            step = try await database.write(isolation: .readCommitted, lostCommitCheck: { step, db in
                try Self.committed(step, presented: presented, replacement: replacement, in: db)
            }) { db -> RefreshStep in
                // One round trip on PostgreSQL: the token with its session, its account (read in
                // this transaction so the response's user matches the tokens; with its identities
                // for the first-party answer, which shows them) and its client's standing; the
                // conditional rotation (its row count decides single use); and the realm's key
                // (unless remembered under the stamp read first). The rotation is made before the
                // checks below: a refusal that must change nothing undoes it by throwing
                // (`Undone`), so all rolls back.
                let stampRead = settingsStamp.map { _ in [RealmSettingsVersion.currentStatement(realmID: realmID)] } ?? []
                let showsProfile = presenter.answer.showsProfile
                let keyLookup = activeKeyLookup(realmID: realmID, settingsStamp: settingsStamp)
                let batch = try db.queryBatch(stampRead + [
                    (showsProfile ? Self.refreshProfileLookupSQL : Self.refreshLookupSQL, [.blob(presented.lookup)]),
                    ("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL RETURNING rotated_at",
                     [.integer(at), .blob(presented.lookup)]),
                ] + keyLookup.statements)
                let answers = Array(batch.dropFirst(stampRead.count))
                let rotated = answers[1].count == 1
                /// A refusal that leaves everything as it was.
                func refused(_ code: TokenError.Code) throws -> RefreshStep {
                    if rotated { throw Undone(code: code) }
                    return .refused(code)
                }
                if let settingsStamp, try RealmSettingsVersion.current(fromRows: batch[0]) != settingsStamp {
                    return try refused(.settingsChanged)
                }
                // A selector without its verifier is no token: refused before anything else, so
                // it can neither rotate nor revoke.
                guard let row = answers[0].first, try presented.isHeld(by: row) else { return try refused(.invalidGrant) }
                var session = try SessionSnapshot(row: row)
                guard session.realmID == realmID else { return try refused(.invalidGrant) }
                guard session.clientID == presenter.clientID else { return try refused(.clientMismatch) }
                // Refusals about the client come before the token's own state, so none of them
                // rotates or revokes anything.
                guard let client = try ClientStanding(joinedRow: row), client.admits(sessionOf: session.clientInstanceID)
                else { return try refused(.revoked) }
                switch presenter {
                case .authenticatedClient(let authenticated):
                    // Deleted and re-created between authentication and this read.
                    guard authenticated.instanceID == client.instanceID else { return try refused(.clientMismatch) }
                case .sessionAPI:
                    guard client.usesSessionAPI else { return try refused(.clientNotAllowed) }
                }
                switch try AccountStanding(joinedRow: row) {
                case .active: break
                case .disabled: return try refused(.accountDisabled)
                case .deleted: return try refused(.accountDeleted)
                }
                // Reuse: rotated before (the lookup saw it), or by a concurrent refresh (the
                // rotation changed no row). Whoever holds the family's current token may be an
                // attacker. The revocation must commit, so it is returned, not thrown.
                guard try row.optionalInt("rotated_at") == nil, rotated else {
                    try Self.revoke(db, sessionID: session.id, reason: "reuse", at: at)
                    try Self.recordReuse(db, session: session, clientIP: clientIP, at: at)
                    return .refused(.reuseDetected)
                }
                if try row.optionalInt("revoked_at") != nil { return try refused(.revoked) }
                if session.expiresAt <= at { return try refused(.expired) }
                if let idleExpiresAt = session.idleExpiresAt, idleExpiresAt <= at { return try refused(.idleExpired) }
                if try row.bool("ip_binding"), try row.string("client_ip") != clientIP { return try refused(.ipMismatch) }
                let granted = client.capping(session.scope)
                if let scope, !Set(scope).isSubset(of: granted) { return try refused(.invalidScope) }
                let account = try AccountStanding.account(joinedRow: row)
                let identities = showsProfile ? try AccountStanding.identities(joinedRows: answers[0]) : nil
                // Deferred (see startSession): they travel with COMMIT.
                try Self.insert(db, replacement, sessionID: session.id, at: at)
                // The capped scope is stored: scopes a client loses stay lost to its sessions
                // even if the client is given them again (the user would have to sign in anew).
                // Using the session moves its idle deadline on (last_refreshed_at is its last use).
                session.idleExpiresAt = session.refreshIdleTTL.map { at + Int64($0) }
                try db.executeDeferred("UPDATE sessions SET last_refreshed_at = ?, scope = ?, idle_expires_at = ? WHERE id = ?",
                                       .integer(at), .text(granted.joined(separator: " ")),
                                       session.idleExpiresAt.map { .integer($0) } ?? .null, .text(session.id))
                session.scope = granted
                let key = try keyLookup.answered(by: answers.dropFirst(2)).key()
                return .rotated(session, try Self.material(db, key: key,
                                                          account: account, identities: identities, answer: presenter.answer))
            }
        } catch let undone as Undone {
            step = .refused(undone.code)
        } catch let error as TokenError {
            throw error
        } catch let error as StorageError where error.isTemporary {
            throw TokenError(.storageUnavailable)
        } catch {
            throw TokenError(.storageFailure)
        }
        switch step {
        case .refused(let code):
            throw TokenError(code)
        case .rotated(let session, let material):
            do {
                return try signer.sign(session: session, scope: scope ?? session.scope, material: material,
                                       refreshToken: replacement.text, nonce: nil, at: at)
            } catch {
                throw TokenError(.storageFailure)
            }
        }
    }

    /// Whether the refresh transaction that answered `step` committed, read after its COMMIT went
    /// unanswered (a failover): a rotation by the replacement token it stored (random, so only
    /// this refresh could have), a detected reuse by the revocation. Without this the client's
    /// retry would present a token that was in fact rotated, and revoke its own session as reuse.
    private static func committed(_ step: RefreshStep, presented: RefreshToken, replacement: RefreshToken,
                                  in db: any SQLExecutor) throws -> Bool {
        switch step {
        case .rotated:
            return try db.queryOne("SELECT 1 AS stored FROM refresh_tokens WHERE token_hash = ?", .blob(replacement.lookup)) != nil
        case .refused(.reuseDetected):
            return try db.queryOne("""
                SELECT 1 AS revoked FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                WHERE r.token_hash = ? AND s.revoked_at IS NOT NULL
                """, .blob(presented.lookup)) != nil
        case .refused:
            return true  // nothing was written
        }
    }

    /// The security event of a detected reuse, committed with the revocation it caused.
    private static func recordReuse(_ db: any SQLExecutor, session: SessionSnapshot, clientIP: String, at: Int64) throws {
        try SecurityEventLog.record(db, NewSecurityEvent(
            realmID: session.realmID, type: .refreshTokenReused, at: at, reason: "session_revoked",
            accountID: session.accountID, clientID: session.clientID, sessionID: session.id, clientIP: clientIP))
    }

    /// Revokes a session (logout, /revoke); its refresh and access tokens stop working at once.
    public func revokeSession(realmID: String, sessionID: String) async throws {
        try await database.write { db in try self.revokeSession(in: db, realmID: realmID, sessionID: sessionID) }
    }

    /// The same revocation inside the caller's write transaction (a replayed authorization
    /// code revokes its session in the exchange's transaction).
    public func revokeSession(in db: any SQLExecutor, realmID: String, sessionID: String) throws {
        try db.execute("UPDATE sessions SET revoked_at = ?, revoke_reason = 'logout' WHERE realm_id = ? AND id = ? AND revoked_at IS NULL",
                       .integer(now().unixSeconds), .text(realmID), .text(sessionID))
    }

    /// The session a refresh token of the realm belongs to (any state), or nil for an unknown
    /// token or another realm's (logout revokes it with the access token's session).
    public func sessionID(ofRefreshToken token: String, realmID: String) async throws -> String? {
        guard let presented = RefreshToken(presented: token) else { return nil }
        return try await database.read { db in try Self.sessionID(db, of: presented, realmID: realmID) }
    }

    /// The session of a presented refresh token, in the realm; any state.
    static func sessionID(_ db: any SQLExecutor, of presented: RefreshToken, realmID: String) throws -> String? {
        guard let row = try db.queryOne("""
            SELECT s.id, r.verifier_hash FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
            WHERE r.token_hash = ? AND s.realm_id = ?
            """, .blob(presented.lookup), .text(realmID)), try presented.isHeld(by: row) else { return nil }
        return try row.string("id")
    }

    /// Looks a refresh token up without using it, for /revoke (whose client owns it) and
    /// /introspect (is it active, for whom). Reads only; never rotates. nil for an unknown
    /// token or another realm's.
    public func session(ofRefreshToken token: String, realmID: String) async throws -> RefreshTokenSession? {
        guard let presented = RefreshToken(presented: token) else { return nil }
        let at = now().unixSeconds
        return try await database.read { db in
            guard let row = try db.queryOne("""
                SELECT s.id, s.client_id, s.client_instance, s.account_id, s.scope, s.expires_at, s.revoked_at,
                    s.idle_expires_at,
                    r.created_at, r.rotated_at, r.verifier_hash, \(AccountStanding.columns), \(ClientStanding.columns)
                FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                \(AccountStanding.join(accountColumn: "s.account_id"))
                \(ClientStanding.join(realmColumn: "s.realm_id", clientColumn: "s.client_id"))
                WHERE r.token_hash = ? AND s.realm_id = ?
                """, .blob(presented.lookup), .text(realmID)), try presented.isHeld(by: row) else { return nil }
            // A disabled, deleted or re-created client ends the session as a refresh would see it.
            let client = try ClientStanding(joinedRow: row)
            let active = try row.optionalInt("rotated_at") == nil && row.optionalInt("revoked_at") == nil
                && row.int("expires_at") > at && (try row.optionalInt("idle_expires_at")).map { $0 > at } ?? true
                && AccountStanding(joinedRow: row) == .active
                && client?.admits(sessionOf: try row.string("client_instance")) == true
            let scope = try row.string("scope").split(separator: " ").map(String.init)
            return RefreshTokenSession(
                sessionID: try row.string("id"), clientID: try row.string("client_id"),
                accountID: try row.string("account_id"),
                scope: client?.capping(scope) ?? scope,
                issuedAt: try row.int("created_at"), expiresAt: try row.int("expires_at"), isActive: active)
        }
    }

    /// The account's sessions, newest first (admin listing).
    public func list(realmID: String, accountID: String) async throws -> [SessionInfo] {
        try await database.read { db in
            try db.query("""
                SELECT id, client_id, scope, created_at, expires_at, last_refreshed_at, idle_expires_at, revoked_at FROM sessions
                WHERE realm_id = ? AND account_id = ? ORDER BY created_at DESC, id LIMIT 500
                """, .text(realmID), .text(accountID)).map(SessionInfo.init(row:))
        }
    }

    /// Revokes every live session of an account; returns how many were revoked.
    @discardableResult
    public func revokeSessions(realmID: String, accountID: String, reason: String = "admin") async throws -> Int {
        let at = now().unixSeconds
        return try await database.write { db in
            try Self.revokeAll(db, realmID: realmID, accountID: accountID, reason: reason, at: at)
        }
    }

    // MARK: - Rows

    /// Stores a refresh token of the session. Deferred (see `startSession`): it travels with the
    /// transaction's next statement or COMMIT.
    private static func insert(_ db: any SQLExecutor, _ token: RefreshToken, sessionID: String, at: Int64) throws {
        try db.executeDeferred("INSERT INTO refresh_tokens (token_hash, verifier_hash, session_id, created_at) VALUES (?, ?, ?, ?)",
                               .blob(token.lookup), .optionalBlob(token.verifierHash), .text(sessionID), .integer(at))
    }

    /// What signing for `answer` needs, with the profile (read in `db` unless `identities` are
    /// known) when the answer shows it.
    private static func material(_ db: any SQLExecutor, key: SealedSigningKey, account: Account,
                                 identities: [Identity]?, answer: SessionAnswer) throws -> SigningMaterial {
        SigningMaterial(key: key, account: account, answer: answer, profile: answer.showsProfile
            ? try AccountProfile.loadDeferred(db, account: account, knownIdentities: identities) : nil)
    }

    private static func revoke(_ db: any SQLExecutor, sessionID: String, reason: String, at: Int64) throws {
        try db.execute("UPDATE sessions SET revoked_at = ?, revoke_reason = ? WHERE id = ? AND revoked_at IS NULL",
                       .integer(at), .text(reason), .text(sessionID))
    }

    static func revokeAll(_ db: any SQLExecutor, realmID: String, accountID: String, reason: String,
                          at: Int64) throws -> Int {
        try db.execute("""
            UPDATE sessions SET revoked_at = ?, revoke_reason = ?
            WHERE realm_id = ? AND account_id = ? AND revoked_at IS NULL
            """, .integer(at), .text(reason), .text(realmID), .text(accountID))
    }
}

/// The outcome of the refresh transaction: refusals are returned so a reuse revocation commits.
private enum RefreshStep: Sendable {
    case rotated(SessionSnapshot, SigningMaterial)
    case refused(TokenError.Code)
}

/// A refresh refused after its rotation was sent: thrown so the transaction rolls back.
private struct Undone: Error {
    let code: TokenError.Code
}

/// A refresh token's session as /revoke and /introspect see it. Never holds the token.
public struct RefreshTokenSession: Sendable, Equatable {
    public let sessionID: String
    public let clientID: String
    public let accountID: String
    public let scope: [String]
    /// When this refresh token was issued (its rotation).
    public let issuedAt: Int64
    /// The session's absolute expiry.
    public let expiresAt: Int64
    /// Not rotated, not revoked, not expired (absolute or idle), its account active and its client the enabled
    /// registration the session was issued to.
    public let isActive: Bool
}

import Foundation
import JOSE
import Realms
import Storage

/// Sessions and the tokens they hand out: a session is one refresh family per login, bound
/// to its client (and IP when the client asks for it), with an absolute expiry and, when the
/// realm or client sets `refreshIdleTTL`, an idle deadline each refresh moves on. Refresh
/// rotates the token; a rotated token presented again revokes the whole family. Access tokens
/// are RFC 9068 JWTs signed with the realm's active key; validating one reads its session row
/// (one primary-key lookup), so a revoked session ends its access tokens at once.
public final class TokenService: Sendable {
    /// Lifetime of ID tokens, in seconds.
    public static let idTokenTTL = 3600
    /// Random bytes in a refresh token (256 bits).
    public static let refreshTokenBytes = 32
    /// Longest access token accepted for parsing.
    static let maxAccessTokenLength = 8192

    private let database: any Database
    private let masterKey: MasterKey
    private let publicURL: String
    private let now: @Sendable () -> Date
    private let keys = SigningKeyCache()

    /// `publicURL` is the base of every issuer (`{publicURL}/api/oauth/{realm}`), without a trailing slash.
    public init(database: any Database, masterKey: MasterKey, publicURL: String,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.masterKey = masterKey
        self.publicURL = publicURL
        self.now = now
    }

    /// The issuer of a realm's tokens.
    public func issuer(realmID: String) -> String { "\(publicURL)/api/oauth/\(realmID)" }

    // MARK: - Sessions

    /// Starts a session for an authenticated account and issues its first tokens. Throws
    /// `TokenError` (`accountDisabled`, `accountDeleted`, `noSigningKey`) or a storage error.
    public func startSession(_ request: SessionRequest) async throws -> IssuedTokens {
        let prepared = try await database.write { db in try self.startSession(in: db, request) }
        return try issue(prepared)
    }

    /// Writes a new session and its first refresh token inside the caller's write transaction
    /// (native login commits it together with the account resolution), and opens the realm's
    /// signing key there too, so a key that cannot be opened undoes the session rather than
    /// leaving one nobody got tokens for. Signing itself is left to ``issue(_:)``, after the
    /// commit, so the writer is not held for it. Throws `TokenError` (`accountDisabled`,
    /// `accountDeleted`, `noSigningKey`), a storage error, or a key-opening error.
    /// `account` is the request's account as the caller already read it in this transaction
    /// (native login's resolution), which spares reading it again; nil reads it here.
    /// `withProfile` also reads its identities here, for a response that shows the user.
    public func startSession(in db: any SQLExecutor, _ request: SessionRequest,
                             account: Account? = nil, withProfile: Bool = false) throws -> PreparedSession {
        precondition(account == nil || account?.id == request.accountID, "the account of another session request")
        let at = now().unixSeconds
        let sessionID = SecureRandom.token(byteCount: 16)
        let refreshToken = SecureRandom.token(byteCount: Self.refreshTokenBytes)
        let hash = Self.hash(refreshToken)
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
        let key = try Self.activeKey(db, realmID: request.realmID)
        // Cached after the first use of a kid; the first open is one AES-GCM open and a parse.
        _ = try keys.privateKey(kid: key.kid, realmID: request.realmID, sealed: key.sealed, masterKey: masterKey,
                               at: at)
        try db.execute("""
            INSERT INTO sessions (id, realm_id, client_id, client_instance, account_id, scope, client_ip, ip_binding,
                auth_time, access_token_ttl, created_at, expires_at, refresh_idle_ttl, idle_expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(sessionID), .text(request.realmID), .text(request.clientID), .text(request.clientInstanceID),
            .text(request.accountID), .text(request.scope.joined(separator: " ")), .text(request.clientIP),
            SQLValue(request.ipBinding), .integer(request.authTime), .integer(Int64(request.accessTokenTTL)),
            .integer(at), .integer(expiresAt), request.refreshIdleTTL.map { .integer(Int64($0)) } ?? .null,
            idleExpiresAt.map { .integer($0) } ?? .null)
        try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
                       .blob(hash), .text(sessionID), .integer(at))
        let session = SessionSnapshot(id: sessionID, realmID: request.realmID, clientID: request.clientID,
                                      clientInstanceID: request.clientInstanceID, accountID: request.accountID, scope: request.scope, authTime: request.authTime,
                                      accessTokenTTL: request.accessTokenTTL, expiresAt: expiresAt,
                                      refreshIdleTTL: request.refreshIdleTTL, idleExpiresAt: idleExpiresAt)
        let profile = withProfile ? try AccountProfile.load(db, account: account) : nil
        return PreparedSession(session: session, material: SigningMaterial(key: key, account: account, profile: profile),
                               refreshToken: refreshToken, nonce: request.nonce, at: at)
    }

    /// Signs the access (and ID) token of a session written by ``startSession(in:_:)``; call
    /// it after that transaction committed.
    public func issue(_ prepared: PreparedSession) throws -> IssuedTokens {
        try sign(session: prepared.session, scope: prepared.session.scope, material: prepared.material,
                 refreshToken: prepared.refreshToken, nonce: prepared.nonce, at: prepared.at)
    }

    /// The refresh transaction's one read: the token, its session, account and client standing.
    private static let refreshLookupSQL = """
        SELECT s.*, r.rotated_at, a.status AS account_status, \(ClientStanding.columns) FROM refresh_tokens r
        JOIN sessions s ON s.id = r.session_id
        JOIN accounts a ON a.id = s.account_id
        \(ClientStanding.join(realmColumn: "s.realm_id", clientColumn: "s.client_id"))
        WHERE r.token_hash = ?
        """

    /// Rotates a refresh token: the presented one dies and a new one is returned with a new
    /// access token. A rotated token presented again revokes its whole session (`reuseDetected`).
    /// The session's client is read with it: a disabled, deleted or re-created client ends the
    /// session (`revoked`), the session API serves only public first-party clients
    /// (`clientNotAllowed`), and the session keeps only the scopes its client still allows
    /// (the narrowing is stored). `scope` may narrow the new access token's scope further.
    /// A session past its idle deadline is `idleExpired`; a rotation moves the deadline on.
    /// The session API's refresh also returns the account's profile (`IssuedTokens.profile`).
    public func refresh(realmID: String, presenter: RefreshPresenter, refreshToken: String, scope: [String]?,
                        clientIP: String) async throws(TokenError) -> IssuedTokens {
        let at = now().unixSeconds
        let presented = Self.hash(refreshToken)
        let replacement = SecureRandom.token(byteCount: Self.refreshTokenBytes)
        let replacementHash = Self.hash(replacement)
        let step: RefreshStep
        do {
            // READ COMMITTED on PostgreSQL: single use rests on the conditional UPDATE below (a
            // concurrent rotation makes it change no row, which is reuse), not on SERIALIZABLE,
            // whose index-page locks made refreshes of unrelated sessions fail each other.
            step = try await database.write(isolation: .readCommitted) { db -> RefreshStep in
                guard let row = try db.queryOne(Self.refreshLookupSQL, .blob(presented)) else {
                    return .refused(.invalidGrant)
                }
                var session = try SessionSnapshot(row: row)
                guard session.realmID == realmID else { return .refused(.invalidGrant) }
                guard session.clientID == presenter.clientID else { return .refused(.clientMismatch) }
                // Refusals about the client come before the token's own state, so none of them
                // rotates or revokes anything.
                guard let client = try ClientStanding(joinedRow: row), client.admits(sessionOf: session.clientInstanceID)
                else { return .refused(.revoked) }
                switch presenter {
                case .authenticatedClient(let authenticated):
                    // Deleted and re-created between authentication and this read.
                    guard authenticated.instanceID == client.instanceID else { return .refused(.clientMismatch) }
                case .sessionAPI:
                    guard client.usesSessionAPI else { return .refused(.clientNotAllowed) }
                }
                switch AccountStatus(rawValue: try row.string("account_status")) {
                case .active?: break
                case .disabled?: return .refused(.accountDisabled)
                case .deleted?, nil: return .refused(.accountDeleted)
                }
                if try row.optionalInt("rotated_at") != nil {
                    // Reuse: whoever holds the family's current token may be an attacker. The
                    // revocation must commit, so it is returned, not thrown.
                    try Self.revoke(db, sessionID: session.id, reason: "reuse", at: at)
                    try Self.recordReuse(db, session: session, clientIP: clientIP, at: at)
                    return .refused(.reuseDetected)
                }
                if try row.optionalInt("revoked_at") != nil { return .refused(.revoked) }
                if session.expiresAt <= at { return .refused(.expired) }
                if let idleExpiresAt = session.idleExpiresAt, idleExpiresAt <= at { return .refused(.idleExpired) }
                if try row.bool("ip_binding"), try row.string("client_ip") != clientIP { return .refused(.ipMismatch) }
                let granted = client.capping(session.scope)
                if let scope, !Set(scope).isSubset(of: granted) { return .refused(.invalidScope) }
                // The condition makes rotation single-use even where the writer is not serial.
                let changed = try db.execute(
                    "UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL",
                    .integer(at), .blob(presented))
                guard changed == 1 else {
                    try Self.revoke(db, sessionID: session.id, reason: "reuse", at: at)
                    try Self.recordReuse(db, session: session, clientIP: clientIP, at: at)
                    return .refused(.reuseDetected)
                }
                try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
                               .blob(replacementHash), .text(session.id), .integer(at))
                // The capped scope is stored: scopes a client loses stay lost to its sessions
                // even if the client is given them again (the user would have to sign in anew).
                // Using the session moves its idle deadline on (last_refreshed_at is its last use).
                session.idleExpiresAt = session.refreshIdleTTL.map { at + Int64($0) }
                try db.execute("UPDATE sessions SET last_refreshed_at = ?, scope = ?, idle_expires_at = ? WHERE id = ?",
                               .integer(at), .text(granted.joined(separator: " ")),
                               session.idleExpiresAt.map { .integer($0) } ?? .null, .text(session.id))
                session.scope = granted
                guard let account = try AccountStore.load(db, realmID: realmID, id: session.accountID) else {
                    return .refused(.accountDeleted)
                }
                // Read in this transaction so the response's user matches the tokens, and a failed
                // read undoes the rotation instead of losing the app its new refresh token.
                let profile: AccountProfile?
                switch presenter {
                case .sessionAPI: profile = try AccountProfile.load(db, account: account)
                case .authenticatedClient: profile = nil
                }
                return .rotated(session, SigningMaterial(key: try Self.activeKey(db, realmID: realmID), account: account,
                                                         profile: profile))
            }
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
                return try sign(session: session, scope: scope ?? session.scope, material: material,
                                refreshToken: replacement, nonce: nil, at: at)
            } catch {
                throw TokenError(.storageFailure)
            }
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

    /// The session a refresh token belongs to (any state), for /revoke and /introspect.
    public func sessionID(ofRefreshToken token: String, realmID: String) async -> String? {
        let hash = Self.hash(token)
        return try? await database.read { db in
            try db.queryOne("""
                SELECT s.id FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
                WHERE r.token_hash = ? AND s.realm_id = ?
                """, .blob(hash), .text(realmID)).map { try $0.string("id") }
        }
    }

    /// The account's sessions, newest first (admin listing).
    public func sessions(realmID: String, accountID: String) async throws -> [SessionInfo] {
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

    // MARK: - Access tokens

    /// Access-token validation's one read: the session, its account and its client standing.
    private static let accessLookupSQL = """
        SELECT s.revoked_at, s.realm_id, s.account_id, s.client_id, s.client_instance, a.status,
            \(ClientStanding.columns) FROM sessions s
        JOIN accounts a ON a.id = s.account_id
        \(ClientStanding.join(realmColumn: "s.realm_id", clientColumn: "s.client_id"))
        WHERE s.id = ?
        """

    /// Verifies an access token of the realm (signature with the realm's published keys, type
    /// `at+jwt`, issuer, expiry), then its session, account and client with one indexed read:
    /// a disabled, deleted or re-created client ends its tokens at once (`revoked`), a client
    /// the route does not serve is `clientNotAllowed`, and the scope returned is capped by the
    /// client's current `allowedScopes`.
    public func validateAccessToken(_ token: String, realmID: String,
                                    requiring requirement: AccessRequirement = .anyClient) async -> AccessTokenValidation {
        guard let claims = await verifiedClaims(token, realmID: realmID) else { return .invalid }
        if claims.exp <= now().unixSeconds { return .expired }
        let state = try? await database.read { db in
            try db.queryOne(Self.accessLookupSQL, .text(claims.sessionID)).map { row in
                (revoked: try row.optionalInt("revoked_at") != nil, realmID: try row.string("realm_id"),
                 accountID: try row.string("account_id"), clientID: try row.string("client_id"),
                 clientInstanceID: try row.string("client_instance"), status: try row.string("status"),
                 client: try ClientStanding(joinedRow: row))
            }
        }
        guard let state, state.realmID == realmID, state.accountID == claims.sub, state.clientID == claims.clientID,
              let client = state.client, client.admits(sessionOf: state.clientInstanceID) else {
            return .revoked
        }
        switch requirement {
        case .anyClient: break
        case .sessionAPIClient: if !client.usesSessionAPI { return .clientNotAllowed }
        }
        switch AccountStatus(rawValue: state.status) {
        case .disabled?: return .accountDisabled
        case .deleted?, nil: return .accountDeleted
        case .active?: return state.revoked ? .revoked : .valid(claims.scoped(client.capping(claims.scope)))
        }
    }

    /// What a token refused by ``validateAccessToken(_:realmID:requiring:)`` as `invalid` is
    /// instead, when it is another credential of this realm: an ID token it signed (expired or
    /// not) or one of its refresh tokens. Only reads; a refresh token found here is not used.
    /// nil for anything else, Apple's identity token and other realms' tokens included.
    public func misusedTokenKind(_ token: String, realmID: String) async -> MisusedTokenKind? {
        if let jws = try? CompactJWS(parsing: token, maxLength: Self.maxAccessTokenLength) {
            guard jws.header.typ?.lowercased() != "at+jwt", jws.header.crit == nil,
                  let algorithm = JWSAlgorithm(rawValue: jws.header.alg), let kid = jws.header.kid,
                  let published = await publishedKey(kid: kid), published.realmID == realmID,
                  published.key.verify(signature: jws.signature, message: jws.signingInput, algorithm: algorithm),
                  let payload = try? jws.payloadObject(), payload["iss"]?.stringValue == issuer(realmID: realmID)
            else { return nil }
            return .idToken
        }
        // Refresh tokens are 43 characters; anything much longer is not worth hashing.
        guard token.utf8.count <= 512 else { return nil }
        return await sessionID(ofRefreshToken: token, realmID: realmID) != nil ? .refreshToken : nil
    }

    /// The claims of a correctly signed access token of this realm, or nil.
    private func verifiedClaims(_ token: String, realmID: String) async -> AccessTokenClaims? {
        guard let jws = try? CompactJWS(parsing: token, maxLength: Self.maxAccessTokenLength),
              jws.header.typ?.lowercased() == "at+jwt", jws.header.crit == nil,
              let algorithm = JWSAlgorithm(rawValue: jws.header.alg), let kid = jws.header.kid,
              let published = await publishedKey(kid: kid), published.realmID == realmID,
              published.key.verify(signature: jws.signature, message: jws.signingInput, algorithm: algorithm),
              let payload = try? jws.payloadObject()
        else { return nil }
        guard payload["iss"]?.stringValue == issuer(realmID: realmID),
              let sub = payload["sub"]?.stringValue, let clientID = payload["client_id"]?.stringValue,
              let sid = payload["sid"]?.stringValue, let jti = payload["jti"]?.stringValue,
              let exp = payload["exp"]?.int64Value, let iat = payload["iat"]?.int64Value
        else { return nil }
        let scope = (payload["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        return AccessTokenClaims(realmID: realmID, sub: sub, clientID: clientID, scope: scope, sessionID: sid,
                                 exp: exp, iat: iat, jti: jti)
    }

    /// A verification key by kid, only while the key is published (active, or retired and
    /// before its `publish_until`): the same rule as the realm's `jwks.json`, so Herald accepts
    /// no token a relying party that trusts the JWKS would reject. Cached until the entry's
    /// `trustedUntil`; a storage error is nil here and the token is refused.
    private func publishedKey(kid: String) async -> SigningKeyCache.PublishedKey? {
        let at = now().unixSeconds
        if let cached = keys.publicKey(kid: kid, at: at) { return cached }
        guard kid.utf8.count <= 64 else { return nil }
        let row = try? await database.read { db in
            try db.queryOne("SELECT realm_id, public_jwk, status, publish_until FROM signing_keys WHERE kid = ?",
                            .text(kid)).map {
                (realmID: try $0.string("realm_id"), jwk: try $0.string("public_jwk"),
                 active: try $0.string("status") == "active", publishUntil: try $0.optionalInt("publish_until"))
            }
        }
        guard let row else { return nil }
        let trustedUntil = row.active ? at + SigningKeyCache.activeRecheckInterval : row.publishUntil ?? at
        guard at < trustedUntil else {
            keys.forget(kid: kid)
            return nil
        }
        guard let jwk = try? JSONDecoder().decode(JWK.self, from: Data(row.jwk.utf8)),
              let key = try? jwk.publicKey() else { return nil }
        let published = SigningKeyCache.PublishedKey(realmID: row.realmID, key: key, trustedUntil: trustedUntil)
        keys.remember(kid: kid, published)
        return published
    }

    // MARK: - Signing

    private func sign(session: SessionSnapshot, scope: [String], material: SigningMaterial, refreshToken: String,
                      nonce: String?, at: Int64) throws -> IssuedTokens {
        let key = material.key
        let privateKey = try keys.privateKey(kid: key.kid, realmID: session.realmID, sealed: key.sealed,
                                             masterKey: masterKey, at: at)
        let issuer = issuer(realmID: session.realmID)
        // An access token never outlives its session, nor its idle deadline: a session that
        // ends for want of use leaves no access token alive.
        let sessionEnd = min(session.expiresAt, session.idleExpiresAt ?? session.expiresAt)
        let accessTTL = Int(max(1, min(Int64(session.accessTokenTTL), sessionEnd - at)))
        let accessExp = at + Int64(accessTTL)
        let access: [String: JSONValue] = [
            "iss": .string(issuer), "sub": .string(session.accountID), "aud": .string(session.clientID),
            "client_id": .string(session.clientID), "exp": .number(Double(accessExp)), "iat": .number(Double(at)),
            "jti": .string(SecureRandom.token(byteCount: 16)), "sid": .string(session.id),
            "scope": .string(scope.joined(separator: " ")), "auth_time": .number(Double(session.authTime)),
        ]
        let accessToken = try CompactJWS.sign(header: JOSEHeader(alg: key.algorithm.rawValue, kid: key.kid, typ: "at+jwt"),
                                              payload: JSONValue.object(access).serialized(), key: privateKey)
        var idToken: String?
        if scope.contains("openid") {
            let account = material.account
            var claims: [String: JSONValue] = [
                "iss": .string(issuer), "sub": .string(session.accountID), "aud": .string(session.clientID),
                "exp": .number(Double(at + Int64(Self.idTokenTTL))), "iat": .number(Double(at)),
                "auth_time": .number(Double(session.authTime)), "sid": .string(session.id),
            ]
            if let nonce { claims["nonce"] = .string(nonce) }
            if scope.contains("email") {
                claims["email"] = .string(account.email)
                claims["email_verified"] = .bool(account.emailVerified)
            }
            if scope.contains("profile"), let name = account.name.formatted { claims["name"] = .string(name) }
            idToken = try CompactJWS.sign(header: JOSEHeader(alg: key.algorithm.rawValue, kid: key.kid, typ: "JWT"),
                                          payload: JSONValue.object(claims).serialized(), key: privateKey)
        }
        return IssuedTokens(sessionID: session.id, accountID: session.accountID, accessToken: accessToken,
                            expiresIn: accessTTL, refreshToken: refreshToken,
                            refreshExpiresIn: Int(max(0, session.expiresAt - at)), scope: scope, idToken: idToken,
                            profile: material.profile)
    }

    // MARK: - Rows

    /// SHA-256 of a refresh token's text: high entropy, so a fast hash is enough.
    static func hash(_ token: String) -> [UInt8] { SHA256.hash(Array(token.utf8)) }

    static func activeKey(_ db: any SQLExecutor, realmID: String) throws -> SealedSigningKey {
        guard let row = try db.queryOne(
            "SELECT kid, algorithm, private_key FROM signing_keys WHERE realm_id = ? AND status = 'active'", .text(realmID)),
              let algorithm = SigningAlgorithm(rawValue: try row.string("algorithm"))
        else { throw TokenError(.noSigningKey) }
        return SealedSigningKey(kid: try row.string("kid"), algorithm: SigningKeyRing.jwsAlgorithm(algorithm),
                                sealed: try row.bytes("private_key"))
    }

    static func revoke(_ db: any SQLExecutor, sessionID: String, reason: String, at: Int64) throws {
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

/// The realm's active key as stored (sealed); opened through the cache.
struct SealedSigningKey: Sendable {
    let kid: String
    let algorithm: JWSAlgorithm
    let sealed: [UInt8]
}

/// What signing needs besides the session: the key and the account (for ID-token claims),
/// and the profile to hand back when the caller asked for one.
struct SigningMaterial: Sendable {
    let key: SealedSigningKey
    let account: Account
    var profile: AccountProfile? = nil
}

/// The outcome of the refresh transaction: refusals are returned so a reuse revocation commits.
enum RefreshStep: Sendable {
    case rotated(SessionSnapshot, SigningMaterial)
    case refused(TokenError.Code)
}

/// A session row's fields that token issuance needs.
struct SessionSnapshot: Sendable {
    let id: String
    let realmID: String
    let clientID: String
    let clientInstanceID: String
    let accountID: String
    var scope: [String]
    let authTime: Int64
    let accessTokenTTL: Int
    let expiresAt: Int64
    /// The idle timeout (seconds) and the deadline it sets from the last use; nil: none.
    let refreshIdleTTL: Int?
    var idleExpiresAt: Int64?

    init(id: String, realmID: String, clientID: String, clientInstanceID: String, accountID: String, scope: [String],
         authTime: Int64, accessTokenTTL: Int, expiresAt: Int64, refreshIdleTTL: Int?, idleExpiresAt: Int64?) {
        self.id = id
        self.realmID = realmID
        self.clientID = clientID
        self.clientInstanceID = clientInstanceID
        self.accountID = accountID
        self.scope = scope
        self.authTime = authTime
        self.accessTokenTTL = accessTokenTTL
        self.expiresAt = expiresAt
        self.refreshIdleTTL = refreshIdleTTL
        self.idleExpiresAt = idleExpiresAt
    }

    init(row: Row) throws {
        self.init(id: try row.string("id"), realmID: try row.string("realm_id"), clientID: try row.string("client_id"),
                  clientInstanceID: try row.string("client_instance"), accountID: try row.string("account_id"),
                  scope: try row.string("scope").split(separator: " ").map(String.init),
                  authTime: try row.int("auth_time"), accessTokenTTL: Int(try row.int("access_token_ttl")),
                  expiresAt: try row.int("expires_at"),
                  refreshIdleTTL: try row.optionalInt("refresh_idle_ttl").map { Int($0) },
                  idleExpiresAt: try row.optionalInt("idle_expires_at"))
    }
}

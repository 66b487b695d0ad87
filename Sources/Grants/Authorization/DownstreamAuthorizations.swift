import Foundation
import JOSE
import Realms
import Storage

/// Pending third-party authorizations and the branch B step that turns one into a one-time
/// authorization code within the user's native login. A pending authorization is completed
/// with its `downstreamState`: a handle Herald generates (256 random bits, stored hashed), not
/// the backend's `state`, so a guessable backend state is no capability and the database holds
/// nothing that completes a login. The backend's `state` is kept to be echoed in the redirect.
public struct DownstreamAuthorizations: Sendable {
    /// How long a pending authorization waits for the login, in seconds.
    public static let pendingTTL: Int64 = 600
    /// How long an authorization code lives, in seconds.
    public static let defaultCodeTTL: Int64 = 60
    /// Prefix of issued codes, so they are recognisable in support conversations.
    public static let codePrefix = "ac_"
    /// Prefix of downstream state handles, likewise.
    public static let downstreamStatePrefix = "ds_"

    private let database: any Database
    private let now: @Sendable () -> Date
    private let codeTTL: Int64

    /// Pending authorizations and codes in `database`; `codeTTL` shortens code life in tests.
    public init(database: any Database, codeTTL: Int64 = DownstreamAuthorizations.defaultCodeTTL,
                now: @escaping @Sendable () -> Date) {
        self.database = database
        self.codeTTL = codeTTL
        self.now = now
    }

    /// Records a validated request as pending for `pendingTTL` seconds. Throws `invalidRequest`
    /// when the state is already pending (or used and not yet expired) for the same client in
    /// the realm; an expired row is replaced. States are per client (grants migration 3): a
    /// backend's state may be predictable, and another client must not be able to claim it first.
    /// `settingsStamp`: the realm's `RealmSettingsVersion` when the caller read the realm and the
    /// client it validated `request` against, perhaps from memory; a realm whose stamp differs
    /// now answers `.settingsChanged` and records nothing.
    public func begin(realmID: String, _ request: AuthorizationRequest, settingsStamp: String? = nil)
        async throws -> BeginOutcome {
        let at = now().unixSeconds
        let expiresAt = at + Self.pendingTTL
        let handle = Self.downstreamStatePrefix + SecureRandom.token(byteCount: 32)
        struct Changed: Error {}
        let inserted: Bool
        do {
            // READ COMMITTED on PostgreSQL: the upsert's conflict target keeps a state single per
            // client, and the DELETEs are idempotent. Under SERIALIZABLE their index-page locks
            // made concurrent begins fail each other (503s in the bench's flow at 64 connections).
            inserted = try await database.write(isolation: .readCommitted) { db in
                // Expired rows are garbage; dropping them here keeps the table small without a job.
                // Deferred: on PostgreSQL they travel with the reads below, one round trip and then COMMIT.
                try db.executeDeferred("DELETE FROM pending_authorizations WHERE expires_at <= ?", .integer(at - Self.pendingTTL))
                try db.executeDeferred("DELETE FROM authorization_codes WHERE expires_at <= ?", .integer(at - 86_400))
                let stampRead = settingsStamp.map { _ in [RealmSettingsVersion.currentStatement(realmID: realmID)] } ?? []
                let answers = try db.queryBatch(stampRead + [("""
                    INSERT INTO pending_authorizations (realm_id, state, handle_hash, client_id, client_instance,
                        redirect_uri, code_challenge, scope, nonce, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (realm_id, client_id, state) DO UPDATE SET handle_hash = excluded.handle_hash,
                        client_instance = excluded.client_instance,
                        redirect_uri = excluded.redirect_uri, code_challenge = excluded.code_challenge,
                        scope = excluded.scope, nonce = excluded.nonce, created_at = excluded.created_at,
                        expires_at = excluded.expires_at, consumed_at = NULL
                    WHERE pending_authorizations.expires_at <= ?
                    RETURNING 1 AS recorded
                    """, [
                        .text(realmID), .text(request.state), .blob(SHA256.hash(Array(handle.utf8))),
                        .text(request.clientID), .text(request.clientInstanceID), .text(request.redirectURI),
                        .text(request.codeChallenge), .text(Scope.format(request.scope)), .optional(request.nonce),
                        .integer(at), .integer(expiresAt), .integer(at),
                    ])])
                // Thrown, so the row just recorded rolls back with everything else.
                if let settingsStamp, try RealmSettingsVersion.current(fromRows: answers[0]) != settingsStamp { throw Changed() }
                return !answers[answers.count - 1].isEmpty
            }
        } catch is Changed {
            return .settingsChanged
        }
        guard inserted else { throw GrantsError(.invalidRequest, "state is already pending") }
        return .pending(PendingAuthorization(realmID: realmID, request: request, downstreamState: handle,
                                             expiresAt: expiresAt, expiresIn: Int(Self.pendingTTL)))
    }

    /// Branch B of native login, inside the login's own write transaction `db` (it commits the
    /// code together with the account it is for, or neither): consumes the pending
    /// authorization of `downstreamState` in the realm — same client, unexpired, unused — and issues a one-time
    /// code `ac_…` (256 random bits, stored hashed, `codeTTL` seconds) bound to the client,
    /// redirect URI, PKCE challenge, scope, nonce, account and auth time. Returns the redirect
    /// URI carrying `code`, the backend's `state` and `iss`, with the code's hash.
    ///
    /// Single use rests on the conditional UPDATE alone, so it holds under READ COMMITTED (the
    /// login's isolation on PostgreSQL): a concurrent consumer of the same row waits for the
    /// first one's transaction and then re-checks `consumed_at IS NULL` against the committed
    /// row, matching nothing; if the first one rolled back, the second consumes it instead.
    /// Throws `GrantsError(.invalidDownstreamState)` when no row matched (nothing was written),
    /// and storage errors unchanged, so the caller's transaction rolls back (and can be retried).
    /// `client`: the client as stored now, read in this transaction or checked by it (the
    /// login compares the realm's settings stamp, which every client change renews, in its
    /// first round trip), so it costs no read here.
    public func completeDownstream(in db: any SQLExecutor, realmID: String, issuer: String, client: ClientApp,
                                   downstreamState: String, accountID: String, authTime: Int64) throws -> DownstreamCompletion {
        let at = now().unixSeconds
        let clientID = client.clientId
        guard let pending = try db.queryOne("""
            UPDATE pending_authorizations SET consumed_at = ?
            WHERE handle_hash = ? AND realm_id = ? AND client_id = ? AND consumed_at IS NULL AND expires_at > ?
            RETURNING state, client_instance, redirect_uri, code_challenge, scope, nonce
            """, .integer(at), .blob(SHA256.hash(Array(downstreamState.utf8))), .text(realmID), .text(clientID),
            .integer(at))
        else {
            throw GrantsError(.invalidDownstreamState, "No pending authorization matches this downstream state")
        }
        let redirectURI = try pending.string("redirect_uri")
        // The client may have changed since /authorize: a redirect URI the admin removed, a
        // client disabled meanwhile, or one deleted and created again must not receive a code.
        // Throwing rolls the consumption back.
        guard client.enabled, client.instanceID == (try pending.optionalString("client_instance")),
              client.redirectUris.contains(redirectURI) else {
            throw GrantsError(.invalidDownstreamState, "The pending authorization's client or redirect_uri is no longer registered")
        }
        let code = Self.codePrefix + SecureRandom.token(byteCount: 32)
        let codeHash = SHA256.hash(Array(code.utf8))
        // Deferred: on PostgreSQL it travels with the login's next statement or its COMMIT.
        try db.executeDeferred("""
            INSERT INTO authorization_codes (code_hash, realm_id, client_id, client_instance, redirect_uri,
                code_challenge, scope, nonce, account_id, auth_time, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .blob(codeHash), .text(realmID), .text(clientID), .text(client.instanceID),
            .text(redirectURI),
            .text(try pending.string("code_challenge")), .text(try pending.string("scope")),
            .optional(try pending.optionalString("nonce")), .text(accountID), .integer(authTime),
            .integer(at), .integer(at + codeTTL))
        let location = RedirectURI.appending([("code", code), ("state", try pending.string("state")), ("iss", issuer)],
                                             to: redirectURI)
        return DownstreamCompletion(redirectURI: location, codeHash: codeHash)
    }
}

extension DownstreamAuthorizations {
    /// The longest `downstreamState` worth looking up: Herald's handles are `ds_` and 43
    /// characters; anything longer names nothing.
    public static let maximumDownstreamStateLength = 128

    /// Whether `downstreamState` names an authorization of `clientID` in the realm that is
    /// still waiting for its login (unconsumed, unexpired), read in the caller's transaction.
    /// A flow that will complete it (the Apple web flow) checks this before keeping anything.
    public static func isPending(_ db: any SQLExecutor, realmID: String, clientID: String, downstreamState: String,
                                 at: Int64) throws -> Bool {
        guard downstreamState.utf8.count <= maximumDownstreamStateLength else { return false }
        return try db.queryOne("""
            SELECT 1 AS pending FROM pending_authorizations
            WHERE handle_hash = ? AND realm_id = ? AND client_id = ? AND consumed_at IS NULL AND expires_at > ?
            """, .blob(SHA256.hash(Array(downstreamState.utf8))), .text(realmID), .text(clientID), .integer(at)) != nil
    }
}

/// A recorded pending authorization, as /authorize reports it.
public struct PendingAuthorization: Sendable, Equatable {
    public let realmID: String
    public let request: AuthorizationRequest
    /// The handle the app completes the authorization with (`ds_…`); known only to the
    /// response of /authorize, never stored.
    public let downstreamState: String
    public let expiresAt: Int64
    public let expiresIn: Int
}

/// What `DownstreamAuthorizations.begin` ended in when it did not throw.
public enum BeginOutcome: Sendable {
    case pending(PendingAuthorization)
    /// The realm's settings changed since the caller read them: nothing was recorded; decide
    /// again on what is stored.
    case settingsChanged
}

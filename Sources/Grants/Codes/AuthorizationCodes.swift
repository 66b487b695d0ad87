import Foundation
import JOSE
import Realms
import Storage

/// Redeems authorization codes at the token endpoint. A code is burnt by its first
/// presentation from its own client, even one that then fails (wrong verifier, redirect URI,
/// expired): a code is worth one attempt. A second presentation is a replay and names the
/// session its first redemption started, so the caller revokes it (RFC 6749 §4.1.2).
public struct AuthorizationCodes: Sendable {
    private let now: @Sendable () -> Date

    /// Codes expiring by `now`.
    public init(now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The first statement of a presentation of `code` by `clientID`: the conditional UPDATE
    /// that burns it, for the caller to send with its other first statements in one round trip
    /// (`SQLExecutor.queryBatch`) and hand its rows to ``redeem(in:_:burntRows:client:redirectURI:codeVerifier:)``.
    public func burn(realmID: String, clientID: String, code: String) -> CodeBurn {
        CodeBurn(codeHash: SHA256.hash(Array(code.utf8)), realmID: realmID, clientID: clientID, at: now().unixSeconds)
    }

    /// Checks the code `burn` burnt for `client` (authenticated, as this request read it: its
    /// current redirect URIs need no read in the write transaction), inside the caller's write
    /// transaction `db`, which ran `burn.statement` (its rows: `burntRows`), starts the session
    /// and records it with ``recordSession(in:_:for:)`` before it commits. Unknown codes, codes
    /// of another client or realm, expired codes, a different or since-removed redirect URI and
    /// a verifier whose S256 differs from the challenge all end in `.rejected`; a used code ends
    /// in `.replayed`.
    ///
    /// Single use rests on the conditional UPDATE alone, so it holds under READ COMMITTED: a
    /// concurrent redemption of the same code waits for the first one's transaction, then
    /// matches no row and reads the committed one, with its session, as a replay.
    public func redeem(in db: any SQLExecutor, _ burn: CodeBurn, burntRows: [Row], client: ClientApp,
                       redirectURI: String, codeVerifier: String) throws -> CodeRedemption {
        precondition(burn.clientID == client.clientId, "a burn of another client's presentation")
        guard let row = burntRows.first else {
            // Either unknown / another client's (not burnt: whoever holds it cannot use it
            // here anyway), or already used: a replay. Only read: on PostgreSQL a burst of
            // replays that all wrote this row would conflict with one another.
            guard let used = try db.queryOne("""
                SELECT session_id FROM authorization_codes
                WHERE code_hash = ? AND realm_id = ? AND client_id = ? AND used_at IS NOT NULL
                """, .blob(burn.codeHash), .text(burn.realmID), .text(burn.clientID))
            else { return .rejected(GrantsError(.invalidGrant, "authorization code is invalid")) }
            return .replayed(sessionID: try used.optionalString("session_id"))
        }
        guard try row.int("expires_at") > burn.at else {
            return .rejected(GrantsError(.invalidGrant, "authorization code expired"))
        }
        // Issued to an earlier registration of this client id (deleted, then created again):
        // the new registration is another client and gets nothing.
        guard try row.optionalString("client_instance") == client.instanceID else {
            return .rejected(GrantsError(.invalidGrant, "authorization code was issued to another registration of this client"))
        }
        guard try row.string("redirect_uri") == redirectURI else {
            return .rejected(GrantsError(.invalidGrant, "redirect_uri does not match the authorization request"))
        }
        // Revalidated at exchange too: the code burns, but a URI removed since it was issued
        // gets no tokens.
        guard client.redirectUris.contains(redirectURI) else {
            return .rejected(GrantsError(.invalidGrant, "redirect_uri is no longer registered for this client"))
        }
        guard PKCE.verify(verifier: codeVerifier, challenge: try row.string("code_challenge")) else {
            return .rejected(GrantsError(.invalidGrant, "code_verifier does not match the code_challenge"))
        }
        return .granted(AuthorizationCodeGrant(
            codeHash: burn.codeHash, realmID: burn.realmID, clientID: burn.clientID, accountID: try row.string("account_id"),
            scope: Scope.parse(try row.string("scope")) ?? [], nonce: try row.optionalString("nonce"),
            authTime: try row.int("auth_time"), redirectURI: redirectURI))
    }

    /// Records the session the grant started, in the transaction that redeemed it, so a later
    /// replay finds it to revoke. Deferred: on PostgreSQL it travels with COMMIT.
    public func recordSession(in db: any SQLExecutor, _ sessionID: String, for grant: AuthorizationCodeGrant) throws {
        try db.executeDeferred("UPDATE authorization_codes SET session_id = ? WHERE code_hash = ?",
                               .text(sessionID), .blob(grant.codeHash))
    }
}

/// One presentation of a code: the UPDATE that burns it if it is unused and its client's, at
/// `at`, and the read of the account it was issued for.
public struct CodeBurn: Sendable {
    let codeHash: [UInt8]
    let realmID: String
    let clientID: String
    let at: Int64

    /// The conditional UPDATE; its rows go to `AuthorizationCodes.redeem`.
    public var statement: (sql: String, parameters: [SQLValue]) {
        ("""
            UPDATE authorization_codes SET used_at = ?
            WHERE code_hash = ? AND realm_id = ? AND client_id = ? AND used_at IS NULL
            RETURNING client_instance, redirect_uri, code_challenge, scope, nonce, account_id, auth_time, expires_at
            """, [.integer(at), .blob(codeHash), .text(realmID), .text(clientID)])
    }

    /// The id of the account the code was issued for (whether or not it burnt now), for
    /// `AccountStore.loadStatement(realmID:idSelectedBy:)` in the same round trip.
    public var accountIDQuery: (sql: String, parameters: [SQLValue]) {
        ("SELECT account_id FROM authorization_codes WHERE code_hash = ? AND realm_id = ? AND client_id = ?",
         [.blob(codeHash), .text(realmID), .text(clientID)])
    }
}

/// What redeeming a code gave.
public enum CodeRedemption: Sendable {
    case granted(AuthorizationCodeGrant)
    /// Rejected: answer the error (`invalid_grant`).
    case rejected(GrantsError)
    /// The code was already used: revoke `sessionID` (when the first redemption recorded one)
    /// and answer `invalid_grant`.
    case replayed(sessionID: String?)
}

/// What a redeemed code grants: the account's session for the client, with the scope and
/// nonce of the original /authorize request.
public struct AuthorizationCodeGrant: Sendable, Equatable {
    let codeHash: [UInt8]
    public let realmID: String
    public let clientID: String
    public let accountID: String
    public let scope: [String]
    public let nonce: String?
    public let authTime: Int64
    public let redirectURI: String
}

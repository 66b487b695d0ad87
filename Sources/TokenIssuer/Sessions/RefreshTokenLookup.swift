import Foundation
import Realms
import Storage

/// Looks a refresh token up without using it, for /revoke (whose client owns it) and
/// /introspect (is it active, for whom). Reads only; never rotates.
public struct RefreshTokenLookup: Sendable {
    private let database: any Database
    private let now: @Sendable () -> Date

    /// A lookup over the sessions in `database`.
    public init(database: any Database, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    /// The token's session in the realm, or nil for an unknown token or another realm's.
    public func session(ofRefreshToken token: String, realmID: String) async throws -> RefreshTokenSession? {
        let hash = TokenService.hash(token)
        let at = now().unixSeconds
        return try await database.read { db in
            guard let row = try db.queryOne("""
                SELECT s.id, s.client_id, s.client_instance, s.account_id, s.scope, s.expires_at, s.revoked_at,
                    s.idle_expires_at,
                    r.created_at, r.rotated_at, a.status AS account_status, \(ClientStanding.columns)
                FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN accounts a ON a.id = s.account_id
                \(ClientStanding.join(realmColumn: "s.realm_id", clientColumn: "s.client_id"))
                WHERE r.token_hash = ? AND s.realm_id = ?
                """, .blob(hash), .text(realmID)) else { return nil }
            // A disabled, deleted or re-created client ends the session as a refresh would see it.
            let client = try ClientStanding(joinedRow: row)
            let active = try row.optionalInt("rotated_at") == nil && row.optionalInt("revoked_at") == nil
                && row.int("expires_at") > at && (try row.optionalInt("idle_expires_at")).map { $0 > at } ?? true
                && row.string("account_status") == AccountStatus.active.rawValue
                && client?.admits(sessionOf: try row.string("client_instance")) == true
            let scope = try row.string("scope").split(separator: " ").map(String.init)
            return RefreshTokenSession(
                sessionID: try row.string("id"), clientID: try row.string("client_id"),
                accountID: try row.string("account_id"),
                scope: client?.capping(scope) ?? scope,
                issuedAt: try row.int("created_at"), expiresAt: try row.int("expires_at"), isActive: active)
        }
    }
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

import Foundation
import JOSE
import Realms
import Storage

/// Verifies Herald's access tokens: the signature with the realm's published keys, then the
/// session, account and client behind the token with one indexed read, so a revoked session
/// ends its access tokens at once.
///
/// A database that cannot be read throws (the caller answers 503 or 500): an outage is never
/// reported as a refused token, which would tell a client to sign its user out.
public struct AccessTokenVerifier: Sendable {
    /// Longest access token accepted for parsing.
    static let maxTokenLength = 8192

    private let database: any Database
    private let issuers: RealmIssuers
    /// The signer's cache: a key this process signs with verifies without reading its row.
    private let keys: SigningKeyCache
    private let now: @Sendable () -> Date

    /// A verifier of the tokens `signer` signs, reading sessions and keys from `database`.
    public init(database: any Database, signer: TokenSigner, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.issuers = signer.issuers
        self.keys = signer.keys
        self.now = now
    }

    /// Access-token validation's one read: the session with its account's and its client's
    /// standing, joined through the fragments Realms publishes for them (Realms owns those tables).
    private static let lookupSQL = """
        SELECT s.revoked_at, s.realm_id, s.account_id, s.client_id, s.client_instance,
            \(AccountStanding.columns), \(ClientStanding.columns) FROM sessions s
        \(AccountStanding.join(accountColumn: "s.account_id"))
        \(ClientStanding.join(realmColumn: "s.realm_id", clientColumn: "s.client_id"))
        WHERE s.id = ?
        """

    /// Verifies an access token of the realm (signature with the realm's published keys, type
    /// `at+jwt`, issuer, expiry), then its session, account and client: a disabled, deleted or
    /// re-created client ends its tokens at once (`revoked`), a client the route does not serve
    /// is `clientNotAllowed`, and the scope returned is capped by the client's current
    /// `allowedScopes` (the requirement is checked against the capped scope). Throws a storage
    /// error when the keys or the session cannot be read.
    public func validate(_ token: String, realmID: String,
                         requiring requirement: AccessRequirement = .anyClient) async throws -> AccessTokenValidation {
        guard let claims = try await verifiedClaims(token, realmID: realmID) else { return .invalid }
        if claims.exp <= now().unixSeconds { return .expired }
        let state = try await database.read { db in
            try db.queryOne(Self.lookupSQL, .text(claims.sessionID)).map { row in
                (revoked: try row.optionalInt("revoked_at") != nil, realmID: try row.string("realm_id"),
                 accountID: try row.string("account_id"), clientID: try row.string("client_id"),
                 clientInstanceID: try row.string("client_instance"), account: try AccountStanding(joinedRow: row),
                 client: try ClientStanding(joinedRow: row))
            }
        }
        guard let state, state.realmID == realmID, state.accountID == claims.sub, state.clientID == claims.clientID,
              let client = state.client, client.admits(sessionOf: state.clientInstanceID) else {
            return .revoked
        }
        let capped = claims.scoped(client.capping(claims.scope))
        guard requirement.admits(client, scope: capped.scope) else { return .clientNotAllowed }
        switch state.account {
        case .disabled: return .accountDisabled
        case .deleted: return .accountDeleted(capped)
        case .active: return state.revoked ? .revoked : .valid(capped)
        }
    }

    /// What a token refused by ``validate(_:realmID:requiring:)`` as `invalid` is instead, when
    /// it is another credential of this realm: an ID token it signed (expired or not) or one of
    /// its refresh tokens. Only reads; a refresh token found here is not used. nil for anything
    /// else, Apple's identity token and other realms' tokens included. Throws a storage error
    /// when the keys or the refresh tokens cannot be read.
    public func misusedTokenKind(_ token: String, realmID: String) async throws -> MisusedTokenKind? {
        if let jws = try? CompactJWS(parsing: token, maxLength: Self.maxTokenLength) {
            guard jws.header.typ?.lowercased() != "at+jwt", jws.header.crit == nil,
                  let algorithm = JWSAlgorithm(rawValue: jws.header.alg), let kid = jws.header.kid,
                  let published = try await publishedKey(kid: kid), published.realmID == realmID,
                  published.key.verify(signature: jws.signature, message: jws.signingInput, algorithm: algorithm),
                  let payload = try? jws.payloadObject(), payload["iss"]?.stringValue == issuers.issuer(realmID: realmID)
            else { return nil }
            return .idToken
        }
        guard let presented = RefreshToken(presented: token) else { return nil }
        let found = try await database.read { db in
            try SessionStore.sessionID(db, of: presented, realmID: realmID)
        }
        return found != nil ? .refreshToken : nil
    }

    /// The claims of a correctly signed access token of this realm, or nil.
    private func verifiedClaims(_ token: String, realmID: String) async throws -> AccessTokenClaims? {
        guard let jws = try? CompactJWS(parsing: token, maxLength: Self.maxTokenLength),
              jws.header.typ?.lowercased() == "at+jwt", jws.header.crit == nil,
              let algorithm = JWSAlgorithm(rawValue: jws.header.alg), let kid = jws.header.kid,
              let published = try await publishedKey(kid: kid), published.realmID == realmID,
              published.key.verify(signature: jws.signature, message: jws.signingInput, algorithm: algorithm),
              let payload = try? jws.payloadObject()
        else { return nil }
        guard payload["iss"]?.stringValue == issuers.issuer(realmID: realmID),
              let sub = payload["sub"]?.stringValue, let clientID = payload["client_id"]?.stringValue,
              let sid = payload["sid"]?.stringValue, let jti = payload["jti"]?.stringValue,
              let exp = payload["exp"]?.int64Value, let iat = payload["iat"]?.int64Value
        else { return nil }
        let scope = (payload["scope"]?.stringValue ?? "").split(separator: " ").map(String.init)
        return AccessTokenClaims(realmID: realmID, sub: sub, clientID: clientID, scope: scope, sessionID: sid,
                                 exp: exp, iat: iat, jti: jti, authTime: payload["auth_time"]?.int64Value)
    }

    /// A verification key by kid, only while the key is published (active, or retired and
    /// before its `publish_until`): the same rule as the realm's `jwks.json`, so Herald accepts
    /// no token a relying party that trusts the JWKS would reject. Cached until the entry's
    /// `trustedUntil`. nil for an unknown or unpublished kid; a storage error is thrown, also
    /// for a published key whose stored JWK cannot be read.
    private func publishedKey(kid: String) async throws -> SigningKeyCache.PublishedKey? {
        let at = now().unixSeconds
        if let cached = keys.publicKey(kid: kid, at: at) { return cached }
        guard kid.utf8.count <= 64 else { return nil }
        let row = try await database.read { db in
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
        // Herald wrote this JWK itself: one that does not read is damaged stored data, an error
        // to see (the caller answers 500 and logs it), not a token quietly refused as invalid.
        guard let jwk = try? JSONDecoder().decode(JWK.self, from: Data(row.jwk.utf8)),
              let key = try? jwk.publicKey() else {
            throw StorageError(code: .typeMismatch, message: "column 'public_jwk' holds an unreadable key, expected a public JWK")
        }
        let published = SigningKeyCache.PublishedKey(realmID: row.realmID, key: key, trustedUntil: trustedUntil)
        keys.remember(kid: kid, published)
        return published
    }
}

import Foundation
import JOSE
import Realms
import Storage

/// Each realm's signing keys: one active key signs, retired keys stay published in the
/// realm's JWKS until every token they signed has expired. Private keys are sealed with
/// AES-256-GCM under the master key, bound to realm and kid.
public struct SigningKeyRing: Sendable {
    /// Extra seconds a retired key stays published past the longest token lifetime, covering
    /// clock skew between nodes and verifiers.
    public static let retentionLeeway: Int64 = 300
    /// A fixed retention (two days) for callers that pass one explicitly.
    public static let defaultRetiredKeyRetention: Int64 = 172_800

    private let database: any Database
    private let masterKey: MasterKey
    /// Fixed retention (tests); nil computes it per realm from its token lifetimes.
    private let retiredKeyRetention: Int64?
    private let now: @Sendable () -> Date

    /// `retiredKeyRetention` nil (the default) keeps a retired key published for
    /// max(realm access-token TTL, client overrides, ID-token TTL) + leeway after rotation.
    public init(database: any Database, masterKey: MasterKey, retiredKeyRetention: Int64? = nil,
                now: @escaping @Sendable () -> Date) {
        self.database = database
        self.masterKey = masterKey
        self.retiredKeyRetention = retiredKeyRetention
        self.now = now
    }

    /// Generates and seals a key for the realm (outside any transaction).
    public func prepareKey(realmID: String, algorithm: SigningAlgorithm) throws -> PreparedSigningKey {
        let jws = Self.jwsAlgorithm(algorithm)
        let key = try PrivateKey.generate(for: jws)
        let kid = SecureRandom.token(byteCount: 12)
        var jwk = key.publicKey.jwk(keyID: kid)
        jwk.use = "sig"
        jwk.alg = jws.rawValue
        let sealed = masterKey.seal(try key.pkcs8DER(), context: Self.sealContext(realmID: realmID, kid: kid))
        return PreparedSigningKey(realmID: realmID, kid: kid, algorithm: algorithm, sealedPrivateKey: sealed, publicJWK: jwk)
    }

    /// Makes a prepared key the realm's active key inside the caller's write transaction,
    /// retiring the previous active key (still published for the retention period). The realm's
    /// settings stamp is renewed with it, so every node stops signing with a remembered key at
    /// once (`ActiveKeyMemory`).
    @discardableResult
    public func activate(_ key: PreparedSigningKey, in db: any SQLExecutor) throws -> SigningKeyInfo {
        let at = now().unixSeconds
        let retention = try retiredKeyRetention ?? Self.retention(db, realmID: key.realmID)
        try db.execute("""
            UPDATE signing_keys SET status = 'retired', retired_at = ?, publish_until = ?
            WHERE realm_id = ? AND status = 'active'
            """, .integer(at), .integer(at + retention), .text(key.realmID))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let jwk = String(decoding: try encoder.encode(key.publicJWK), as: UTF8.self)
        try db.execute("""
            INSERT INTO signing_keys (kid, realm_id, algorithm, private_key, public_jwk, status, created_at)
            VALUES (?, ?, ?, ?, ?, 'active', ?)
            """, .text(key.kid), .text(key.realmID), .text(key.algorithm.rawValue), .blob(key.sealedPrivateKey),
            .text(jwk), .integer(at))
        try RealmSettingsVersion.bump(db, realmID: key.realmID)
        return SigningKeyInfo(kid: key.kid, algorithm: key.algorithm.rawValue, status: "active", createdAt: at,
                              retiredAt: nil, publishUntil: nil)
    }

    /// Generates a new active key for the realm and retires the current one.
    public func rotate(realmID: String, algorithm: SigningAlgorithm) async throws -> SigningKeyInfo {
        let key = try prepareKey(realmID: realmID, algorithm: algorithm)
        let ring = self
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            return try ring.activate(key, in: db)
        }
    }

    /// An operator's rotation: a new active key of the realm's configured algorithm, audited
    /// as `keys.rotate`. Throws `RealmsError.notFound` for an unknown realm.
    public func rotate(realmID: String, context: ChangeContext) async throws -> SigningKeyInfo {
        guard let realm = try await RealmStore(database: database, now: now).realm(realmID) else {
            throw RealmsError.notFound("realm")
        }
        let key = try prepareKey(realmID: realmID, algorithm: realm.signingAlgorithm)
        let ring = self
        let at = now().unixSeconds
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            let previous = try db.queryOne("SELECT kid FROM signing_keys WHERE realm_id = ? AND status = 'active'",
                                           .text(realmID)).map { try $0.string("kid") }
            let info = try ring.activate(key, in: db)
            try AuditLog.record(db, at: at, context: context, action: "keys.rotate", target: "realms/\(realmID)/keys",
                                realmID: realmID, changes: [
                                    "activeKid": FieldChange(before: previous.map { .string($0) } ?? .null, after: .string(info.kid)),
                                    "algorithm": FieldChange(before: .null, after: .string(info.algorithm)),
                                ])
            return info
        }
    }

    /// How long a key retired now must stay published: every token it signed has expired by
    /// then. The realm's and its clients' lifetimes come from Realms (an unknown realm: the
    /// longest lifetime a realm may set).
    static func retention(_ db: any SQLExecutor, realmID: String) throws -> Int64 {
        let accessTTL = try RealmStore.longestAccessTokenTTL(db, realmID: realmID) ?? Int64(Realm.accessTokenTTLRange.upperBound)
        return max(accessTTL, Int64(TokenSigner.idTokenTTL)) + retentionLeeway
    }

    /// The public keys to publish for the realm: the active key and unexpired retired keys. A
    /// key whose stored JWK cannot be read is left out, so the realm's other keys still verify,
    /// and named in `unreadableKids` for the caller to log: damaged stored data must be seen.
    public func publishedKeys(realmID: String) async throws -> PublishedSigningKeys {
        let at = now().unixSeconds
        return try await database.read { db in
            var keys: [JWK] = [], unreadable: [String] = []
            for row in try db.query("""
                SELECT kid, public_jwk FROM signing_keys
                WHERE realm_id = ? AND (status = 'active' OR publish_until > ?)
                ORDER BY (status = 'active') DESC, created_at DESC, kid
                """, .text(realmID), .integer(at)) {
                if let jwk = try? JSONDecoder().decode(JWK.self, from: Data(try row.string("public_jwk").utf8)) {
                    keys.append(jwk)
                } else {
                    unreadable.append(try row.string("kid"))
                }
            }
            return PublishedSigningKeys(keys: keys, unreadableKids: unreadable)
        }
    }

    /// Every key of the realm, newest first (for the admin key listing).
    public func keys(realmID: String) async throws -> [SigningKeyInfo] {
        try await database.read { db in
            try db.query("""
                SELECT kid, algorithm, status, created_at, retired_at, publish_until FROM signing_keys
                WHERE realm_id = ? ORDER BY (status = 'active') DESC, created_at DESC, kid
                """, .text(realmID)).map { row in
                SigningKeyInfo(kid: try row.string("kid"), algorithm: try row.string("algorithm"),
                               status: try row.string("status"), createdAt: try row.int("created_at"),
                               retiredAt: try row.optionalInt("retired_at"), publishUntil: try row.optionalInt("publish_until"))
            }
        }
    }

    /// Associated data binding a sealed key to its realm and kid.
    static func sealContext(realmID: String, kid: String) -> String { "signing-key:\(realmID):\(kid)" }

    static func jwsAlgorithm(_ algorithm: SigningAlgorithm) -> JWSAlgorithm {
        switch algorithm {
        case .es256: .es256
        case .rs256: .rs256
        case .edDSA: .edDSA
        }
    }
}

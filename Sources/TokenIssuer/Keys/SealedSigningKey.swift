import JOSE
import Realms
import Storage

/// The realm's active key as stored (sealed); opened through `SigningKeyCache`.
struct SealedSigningKey: Sendable {
    let kid: String
    let algorithm: JWSAlgorithm
    let sealed: [UInt8]

    /// The realm's active key, read inside the caller's transaction so the session written
    /// there and the key its tokens are signed with agree. Throws `TokenError(.noSigningKey)`
    /// when the realm has none.
    static func active(_ db: any SQLExecutor, realmID: String) throws -> SealedSigningKey {
        let statement = activeStatement(realmID: realmID)
        return try active(fromRows: try db.query(statement.sql, statement.parameters))
    }

    /// What `active(_:realmID:)` runs, for a body that sends it with other statements in one
    /// round trip (`SQLExecutor.queryBatch`); decode its rows with `active(fromRows:)`.
    static func activeStatement(realmID: String) -> (sql: String, parameters: [SQLValue]) {
        ("SELECT kid, algorithm, private_key FROM signing_keys WHERE realm_id = ? AND status = 'active'", [.text(realmID)])
    }

    static func active(fromRows rows: [Row]) throws -> SealedSigningKey {
        guard let row = rows.first, let algorithm = SigningAlgorithm(rawValue: try row.string("algorithm"))
        else { throw TokenError(.noSigningKey) }
        return SealedSigningKey(kid: try row.string("kid"), algorithm: SigningKeyRing.jwsAlgorithm(algorithm),
                                sealed: try row.bytes("private_key"))
    }
}

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
        guard let row = try db.queryOne(
            "SELECT kid, algorithm, private_key FROM signing_keys WHERE realm_id = ? AND status = 'active'", .text(realmID)),
              let algorithm = SigningAlgorithm(rawValue: try row.string("algorithm"))
        else { throw TokenError(.noSigningKey) }
        return SealedSigningKey(kid: try row.string("kid"), algorithm: SigningKeyRing.jwsAlgorithm(algorithm),
                                sealed: try row.bytes("private_key"))
    }
}

import Foundation
import JOSE
import Synchronization

/// Decrypted signing keys and parsed public keys, by kid. A kid never changes its key, so
/// entries never go stale: rotation makes a new kid, which is simply not cached yet. This
/// spares each request an AES-GCM open and a PKCS#8 parse (or a JWK import).
final class SigningKeyCache: Sendable {
    /// A verification key and the realm it belongs to.
    struct PublishedKey: Sendable {
        let realmID: String
        let key: PublicKey
    }

    private let privateKeys = Mutex<[String: PrivateKey]>([:])
    private let publicKeys = Mutex<[String: PublishedKey]>([:])

    /// The decrypted private key of `kid`, opening `sealed` on the first use.
    func privateKey(kid: String, realmID: String, sealed: [UInt8], masterKey: MasterKey) throws -> PrivateKey {
        if let key = privateKeys.withLock({ $0[kid] }) { return key }
        let der = try masterKey.open(sealed, context: SigningKeyRing.sealContext(realmID: realmID, kid: kid))
        let key = try PrivateKey(pkcs8DER: der)
        privateKeys.withLock { $0[kid] = key }
        publicKeys.withLock { $0[kid] = PublishedKey(realmID: realmID, key: key.publicKey) }
        return key
    }

    /// A cached verification key.
    func publicKey(kid: String) -> PublishedKey? {
        publicKeys.withLock { $0[kid] }
    }

    /// Remembers a verification key loaded from the database.
    func remember(kid: String, _ key: PublishedKey) {
        publicKeys.withLock { $0[kid] = key }
    }
}

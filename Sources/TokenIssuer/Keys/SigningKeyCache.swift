import Foundation
import JOSE
import Synchronization

/// Decrypted signing keys and parsed public keys, by kid. A kid never changes its key
/// material, so private keys never go stale: rotation makes a new kid, which is simply not
/// cached yet. This spares each request an AES-GCM open and a PKCS#8 parse (or a JWK import).
///
/// A kid's *publication* does change (active → retired → unpublished), and verification
/// trusts only published keys, so every verification entry carries the time until which it
/// may be trusted without re-reading the key's row.
final class SigningKeyCache: Sendable {
    /// How long an active key's entry is trusted before its row is read again. Rotation keeps
    /// a retired key published for at least `SigningKeyRing.retentionLeeway` (300 s), longer
    /// than this, so an entry cached while its key was active always lapses before the key's
    /// `publish_until` — on this node and on every other node, whose caches are separate.
    static let activeRecheckInterval: Int64 = 60

    /// A verification key, the realm it belongs to, and the time (Unix seconds) after which the
    /// entry must be re-read: the key's `publish_until` once retired, else a recheck deadline.
    struct PublishedKey: Sendable {
        let realmID: String
        let key: PublicKey
        let trustedUntil: Int64
    }

    private let privateKeys = Mutex<[String: PrivateKey]>([:])
    private let publicKeys = Mutex<[String: PublishedKey]>([:])

    /// The decrypted private key of `kid`, opening `sealed` on the first use. Only the active
    /// key signs, so its public half is remembered as active at `at`.
    func privateKey(kid: String, realmID: String, sealed: [UInt8], masterKey: MasterKey, at: Int64) throws -> PrivateKey {
        if let key = privateKeys.withLock({ $0[kid] }) { return key }
        let der = try masterKey.open(sealed, context: SigningKeyRing.sealContext(realmID: realmID, kid: kid))
        let key = try PrivateKey(pkcs8DER: der)
        privateKeys.withLock { $0[kid] = key }
        remember(kid: kid, PublishedKey(realmID: realmID, key: key.publicKey,
                                        trustedUntil: at + Self.activeRecheckInterval))
        return key
    }

    /// A verification key still trusted at `at`, or nil (unknown, or due for a re-read).
    func publicKey(kid: String, at: Int64) -> PublishedKey? {
        publicKeys.withLock { entries in
            guard let entry = entries[kid] else { return nil }
            return at < entry.trustedUntil ? entry : nil
        }
    }

    /// Remembers a verification key read from the database.
    func remember(kid: String, _ key: PublishedKey) {
        publicKeys.withLock { $0[kid] = key }
    }

    /// Drops a key that is no longer published, so the map does not keep it.
    func forget(kid: String) {
        publicKeys.withLock { _ = $0.removeValue(forKey: kid) }
    }
}

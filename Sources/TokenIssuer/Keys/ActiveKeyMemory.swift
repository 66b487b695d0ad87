import Synchronization

/// Each realm's active signing key as a transaction last read it, with the realm's
/// `RealmSettingsVersion` stamp that transaction confirmed. Activating a key renews the stamp
/// in the same transaction (`SigningKeyRing.activate`), so a later transaction that confirms
/// the same stamp knows the remembered key is still the active one — on every node sharing the
/// database — and spares the key's read (one statement per login, refresh and code exchange).
///
/// An entry is also trusted for `trustInterval` seconds at most: a node of an older version
/// activates keys without renewing the stamp. A key signing that long after its retirement is
/// still harmless, because a retired key stays published for the longest token lifetime plus
/// `SigningKeyRing.retentionLeeway` (300 s), longer than this interval.
final class ActiveKeyMemory: Sendable {
    static let trustInterval: Int64 = 60

    private struct Entry {
        let stamp: String
        let key: SealedSigningKey
        let readAt: Int64
    }

    private let entries = Mutex<[String: Entry]>([:])

    /// The realm's key remembered under `stamp`, unless it is older than the trust interval at `at`.
    func key(realmID: String, stamp: String, at: Int64) -> SealedSigningKey? {
        entries.withLock { entries in
            guard let entry = entries[realmID], entry.stamp == stamp, at < entry.readAt + Self.trustInterval else {
                return nil
            }
            return entry.key
        }
    }

    /// Remembers the key read at `at` in a transaction that confirmed the realm's `stamp`.
    func remember(_ key: SealedSigningKey, realmID: String, stamp: String, at: Int64) {
        entries.withLock { $0[realmID] = Entry(stamp: stamp, key: key, readAt: at) }
    }
}

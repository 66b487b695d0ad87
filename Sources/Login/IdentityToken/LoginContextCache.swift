import Synchronization

/// Each node's memory of the settings a login reads before it verifies a token (realm,
/// provider configuration, client), per (realm, client id), so a returning login needs no
/// reader turn before its write. A remembered context is only a guess: the login's write
/// transaction compares its `version` with the realm's `RealmSettingsVersion` and the login
/// starts again from a fresh read when they differ, so a change made on any node is obeyed by
/// the next write on every node.
final class LoginContextCache<Configuration: Sendable>: Sendable {
    private struct Key: Hashable {
        let realmID: String
        let clientID: String
    }

    /// Past this many (realm, client) pairs the memory starts over: callers choose the client
    /// id, and only found, enabled clients are remembered, but the bound must not rest on that.
    static var capacity: Int { 4_096 }

    private let entries = Mutex<[Key: LoginContext<Configuration>]>([:])

    /// The remembered settings for a login of `clientID` in `realmID`.
    func context(realmID: String, clientID: String) -> LoginContext<Configuration>? {
        entries.withLock { $0[Key(realmID: realmID, clientID: clientID)] }
    }

    /// Remembers `context` when it is usable, and forgets an older one otherwise.
    func remember(_ context: LoginContext<Configuration>, clientID: String) {
        let key = Key(realmID: context.realm.id, clientID: clientID)
        entries.withLock { entries in
            guard context.isUsable else {
                entries.removeValue(forKey: key)
                return
            }
            if entries.count >= Self.capacity, entries[key] == nil { entries.removeAll() }
            entries[key] = context.remembered
        }
    }

    /// Forgets the pair (its realm is gone or disabled).
    func forget(realmID: String, clientID: String) {
        _ = entries.withLock { $0.removeValue(forKey: Key(realmID: realmID, clientID: clientID)) }
    }

    /// Pairs remembered now (for tests).
    var count: Int { entries.withLock { $0.count } }
}

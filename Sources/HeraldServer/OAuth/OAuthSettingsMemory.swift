import Grants
import JOSE
import Realms
import TokenIssuer
import Synchronization

/// Each node's memory of what an OAuth request reads before its write (`/authorize`, `/token`'s
/// `authorization_code` and `refresh_token` grants, the session API's refresh): the enabled
/// realm, and the client a request named or a secret authenticated, each with the realm's
/// `RealmSettingsVersion` stamp when it was read. So on PostgreSQL each of them is its write's
/// two round trips, with no reads before it.
///
/// A remembered entry is only a guess: the request's write compares the stamp in its first
/// round trip (`SessionStore.refresh(settingsStamp:)`, `AuthorizationCodeExchange.exchange(settingsStamp:)`,
/// `DownstreamAuthorizations.begin(settingsStamp:)`), and a changed realm, client or secret
/// (every such change sets a new stamp) sends the request back to fresh reads, so a change made
/// on any node is obeyed by the next request on every node. Only what let a request through is
/// remembered; a refusal is always decided on what is stored.
final class OAuthSettingsMemory: Sendable {
    struct RememberedRealm: Sendable {
        let realm: Realm
        let stamp: String
        /// Read by this request rather than found in memory.
        var isReadNow = false
    }

    private struct ClientKey: Hashable {
        let realmID: String
        let clientID: String
    }

    private struct RememberedClient {
        let client: ClientApp
        /// SHA-256 of the secret that authenticated it (nil: a public client).
        let secretHash: [UInt8]?
        let stamp: String
    }

    /// Past this many entries a table starts over: callers name realms and clients, and only
    /// found ones are remembered, but the bound must not rest on that.
    static let capacity = 4_096

    private let realms = Mutex<[String: RememberedRealm]>([:])
    private let clients = Mutex<[ClientKey: RememberedClient]>([:])
    /// Clients found by id for requests that only name them (`/authorize`): never handed out
    /// as authenticated, so kept apart from `clients`.
    private let namedClients = Mutex<[ClientKey: (client: ClientApp, stamp: String)]>([:])

    /// The enabled realm to start an OAuth request from: remembered, else (or when `fresh`) read
    /// and remembered; nil when it does not exist or is disabled.
    func enabledRealm(_ id: String, in store: RealmStore, fresh: Bool = false) async throws -> RememberedRealm? {
        if !fresh, let remembered = realms.withLock({ $0[id] }) { return remembered }
        guard let (realm, stamp) = try await store.enabledRealmStamped(id) else {
            forget(realmID: id)
            return nil
        }
        remember(realm, stamp: stamp)
        return RememberedRealm(realm: realm, stamp: stamp, isReadNow: true)
    }

    /// Runs `write` from `settings`, and once more from the realm as stored when its stamp
    /// changed meanwhile (`TokenError.settingsChanged`: nothing was changed). A realm gone or
    /// disabled by then answers 404; a second change in a row reaches the caller.
    func withCurrentSettings<T>(from settings: RememberedRealm, in store: RealmStore,
                                _ write: (RememberedRealm) async throws -> T) async throws -> T {
        do {
            return try await write(settings)
        } catch let error as TokenError where error.code == .settingsChanged {
            guard let fresh = try await enabledRealm(settings.realm.id, in: store, fresh: true) else {
                throw APIError.notFound("Realm")
            }
            return try await write(fresh)
        }
    }

    private func remember(_ realm: Realm, stamp: String) {
        realms.withLock { table in
            if table.count >= Self.capacity, table[realm.id] == nil { table.removeAll() }
            table[realm.id] = RememberedRealm(realm: realm, stamp: stamp)
        }
    }

    /// The client remembered for these credentials under `stamp`: the same client id and, for a
    /// confidential client, the same secret (compared in constant time, as hashes).
    func client(realmID: String, _ credentials: ClientCredentials, stamp: String) -> ClientApp? {
        guard let remembered = clients.withLock({ $0[ClientKey(realmID: realmID, clientID: credentials.clientID)] }),
              remembered.stamp == stamp else { return nil }
        switch (remembered.secretHash, credentials.secret) {
        case (nil, nil):
            return remembered.client
        case (let stored?, let secret?):
            return ConstantTime.equals(stored, SHA256.hash(secret)) ? remembered.client : nil
        default:
            return nil
        }
    }

    /// Remembers `client`, just authenticated by `credentials` with the realm read at `stamp`.
    func remember(_ client: ClientApp, authenticatedBy credentials: ClientCredentials, realmID: String, stamp: String) {
        let key = ClientKey(realmID: realmID, clientID: credentials.clientID)
        let remembered = RememberedClient(client: client, secretHash: credentials.secret.map { SHA256.hash($0) }, stamp: stamp)
        clients.withLock { table in
            if table.count >= Self.capacity, table[key] == nil { table.removeAll() }
            table[key] = remembered
        }
    }

    /// The client `clientID` of the realm as stored under `stamp`, for a request that names it
    /// without authenticating it: remembered, else read by `read` and remembered when found.
    func namedClient(realmID: String, clientID: String, stamp: String,
                     read: () async throws -> ClientApp?) async throws -> ClientApp? {
        let key = ClientKey(realmID: realmID, clientID: clientID)
        if let remembered = namedClients.withLock({ $0[key] }), remembered.stamp == stamp { return remembered.client }
        guard let client = try await read() else { return nil }
        namedClients.withLock { table in
            if table.count >= Self.capacity, table[key] == nil { table.removeAll() }
            table[key] = (client, stamp)
        }
        return client
    }

    /// Forgets the realm and its clients (its stamp changed, or it is gone). Clients are only
    /// swept for a realm that was remembered, so requests naming unknown realms cost no sweep;
    /// a client left behind is never handed out under another stamp.
    func forget(realmID: String) {
        guard realms.withLock({ $0.removeValue(forKey: realmID) }) != nil else { return }
        clients.withLock { table in table = table.filter { $0.key.realmID != realmID } }
        namedClients.withLock { table in table = table.filter { $0.key.realmID != realmID } }
    }
}

import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import Storage

/// Keys are expensive to generate; every test signs with the same fake Apple keys.
let sharedKeys: FakeAppleKeys = try! FakeAppleKeys()

/// A fake Apple on loopback, a cache pointed at it, and a clock the test controls. The server
/// stops when the fixture goes away.
final class LiveApple: Sendable {
    let clock: TestClock
    let server: FakeJWKSServer
    let cache: AppleJWKSCache

    init(behaviour: FakeJWKSServer.Behaviour = .serve(cacheControl: nil), document: [UInt8] = sharedKeys.document,
         connectTimeout: TimeInterval = 2, totalTimeout: TimeInterval = 5) throws {
        clock = TestClock()
        server = try FakeJWKSServer(document: document)
        server.setBehaviour(behaviour)
        var configuration = AppleJWKSClientConfiguration(url: server.url)
        configuration.connectTimeout = connectTimeout
        configuration.totalTimeout = totalTimeout
        cache = AppleJWKSCache(configuration: configuration, now: clock.closure)
    }

    deinit { server.stop() }

    var minter: AppleTokenMinter { AppleTokenMinter(keys: sharedKeys, now: clock.now) }

    func verifier(replayStore: AppleReplayStore? = nil) -> AppleIdentityVerifier {
        AppleIdentityVerifier(jwks: cache, replayStore: replayStore, now: clock.closure)
    }
}

/// The policy of a realm accepting the minter's default audience and requiring a nonce.
func defaultPolicy(nonceRequired: Bool = true, rawNonce: String? = AppleTokenMinter.defaultRawNonce,
                   audiences: Set<String> = [AppleTokenMinter.defaultAudience, "com.example.herald.web"],
                   realmID: String = "acme") -> AppleVerificationPolicy {
    AppleVerificationPolicy(audiences: audiences, nonceRequired: nonceRequired, rawNonce: rawNonce, realmID: realmID)
}

/// An offline verifier over the fake keys, at a fixed instant.
struct OfflineApple {
    let clock = TestClock()
    let keys = AppleStaticKeySet(keySet: try! sharedKeys.keySet)
    var minter: AppleTokenMinter { AppleTokenMinter(keys: sharedKeys, now: clock.now) }
    func verifier(replayStore: AppleReplayStore? = nil) -> AppleIdentityVerifier {
        AppleIdentityVerifier(jwks: keys, replayStore: replayStore, now: clock.closure)
    }
}

/// A fresh database of one backend with the replay store's migrations, and the store over it.
struct ReplayDatabase {
    let fresh: FreshDatabase
    let store: AppleReplayStore

    init(_ backend: Backend) async throws {
        fresh = try await FreshDatabase(backend, migrations: AppleReplayStore.migrations)
        store = AppleReplayStore()
    }

    var database: any Database { fresh.database }

    /// Verifies `token` and records its replay claim in a write transaction of its own, as
    /// native login does in its login transaction: a claim already taken is `replayed`.
    func verify(_ verifier: AppleIdentityVerifier, token: String,
                policy: AppleVerificationPolicy) async throws -> AppleVerificationResult {
        let (result, replay) = await verifier.verifyDeferringReplay(token: token, policy: policy)
        guard let replay else { return result }
        let first = try await database.write { db in try replay.record(in: db) }
        return first ? result : .rejected(.replayed)
    }

    /// Claims (acme, `subject`, "n") with `store` (default: this database's) in a write
    /// transaction of its own, deleting up to `purgingUpTo` expired rows with it.
    func claim(subject: String, expiresAt: Int64, now: Int64, purgingUpTo purgeLimit: Int,
               in store: AppleReplayStore? = nil) async throws -> Bool {
        let store = store ?? self.store
        return try await database.write { db in
            try store.claim(db, realmID: "acme", subject: subject, nonce: "n", expiresAt: expiresAt, now: now,
                            purgingUpTo: purgeLimit)
        }
    }

    func rowCount() async throws -> Int64 {
        try await database.read { db in try db.queryOne("SELECT COUNT(*) AS n FROM apple_token_replays")?.int("n") ?? -1 }
    }
}

extension AppleVerificationResult {
    var claims: AppleIdentityClaims? {
        if case .verified(let claims) = self { return claims }
        return nil
    }

    var isUnavailable: Bool {
        if case .unavailable = self { return true }
        return false
    }
}

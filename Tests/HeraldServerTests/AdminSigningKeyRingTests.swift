import Foundation
import Synchronization
import JOSE
import Realms
import Storage
import Testing
import TokenIssuer

/// The minimal signing key ring that realm creation provisions (TokenIssuer module).
@Suite("Signing key ring")
struct AdminSigningKeyRingTests {
    /// A migrated database with one realm, in a temp folder removed afterwards.
    static func withRing(retention: Int64 = SigningKeyRing.defaultRetiredKeyRetention,
                         _ body: (SigningKeyRing, SQLiteDatabase, KeyRingClock) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = try SQLiteDatabase(path: folder.appendingPathComponent("keys.db").path)
        let clock = KeyRingClock()
        do {
            try await database.migrate(RealmsSchema.migrations + TokenIssuerSchema.migrations)
            let ring = SigningKeyRing(database: database, masterKey: .generate(), retiredKeyRetention: retention, now: clock.now)
            _ = try await RealmStore(database: database).create(id: "acme", context: ChangeContext(actor: "test"))
            try await body(ring, database, clock)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
    }

    @Test("a key of each algorithm signs tokens its published JWK verifies", arguments: SigningAlgorithm.allCases)
    func keySignsAndPublishes(algorithm: SigningAlgorithm) async throws {
        try await Self.withRing { ring, _, _ in
            let info = try await ring.rotate(realmID: "acme", algorithm: algorithm)
            #expect(info.algorithm == algorithm.rawValue && info.status == "active")
            let published = try await ring.publishedKeys(realmID: "acme")
            #expect(published.count == 1)
            let jwk = try #require(published.first)
            #expect(jwk.kid == info.kid && jwk.use == "sig" && jwk.alg == algorithm.rawValue)
            let active = try #require(try await ring.activeKey(realmID: "acme"))
            let message = Array("header.payload".utf8)
            let signature = try active.privateKey.sign(message: message, algorithm: active.algorithm)
            #expect(try jwk.publicKey().verify(signature: signature, message: message, algorithm: active.algorithm))
        }
    }

    @Test("private keys are stored sealed, never as PKCS#8 in the clear")
    func sealedAtRest() async throws {
        try await Self.withRing { ring, database, _ in
            _ = try await ring.rotate(realmID: "acme", algorithm: .es256)
            let active = try #require(try await ring.activeKey(realmID: "acme"))
            let der = try active.privateKey.pkcs8DER()
            let stored = try await database.read { db in try db.queryOne("SELECT private_key FROM signing_keys")?.bytes("private_key") }
            #expect(stored != nil && stored != der)
            #expect(!Data(stored ?? []).contains(Data(der.suffix(32))))
        }
    }

    @Test("a rotated-out key stays published for the retention period, then disappears")
    func retiredKeyRetention() async throws {
        try await Self.withRing(retention: 3600) { ring, _, clock in
            let first = try await ring.rotate(realmID: "acme", algorithm: .es256)
            let second = try await ring.rotate(realmID: "acme", algorithm: .edDSA)
            #expect(try await ring.activeKey(realmID: "acme")?.kid == second.kid)
            #expect(Set(try await ring.publishedKeys(realmID: "acme").compactMap(\.kid)) == [first.kid, second.kid])
            clock.advance(by: 3601)
            #expect(try await ring.publishedKeys(realmID: "acme").compactMap(\.kid) == [second.kid])
            #expect(try await ring.keys(realmID: "acme").map(\.status) == ["active", "retired"])
        }
    }

    @Test("deleting the realm deletes its keys")
    func keysGoWithRealm() async throws {
        try await Self.withRing { ring, database, _ in
            _ = try await ring.rotate(realmID: "acme", algorithm: .es256)
            try await RealmStore(database: database).delete("acme", context: ChangeContext(actor: "test"))
            #expect(try await ring.keys(realmID: "acme").isEmpty)
        }
    }
}

/// A clock the key ring tests move by hand.
final class KeyRingClock: Sendable {
    private let seconds = Atomic<Int64>(1_700_000_000)
    var now: @Sendable () -> Date { { [self] in Date(timeIntervalSince1970: TimeInterval(seconds.load(ordering: .relaxed))) } }
    func advance(by delta: Int64) { seconds.add(delta, ordering: .relaxed) }
}

import Foundation
import HeraldTestSupport
import Synchronization
import JOSE
import Realms
import Storage
import Testing
@testable import TokenIssuer

/// The minimal signing key ring that realm creation provisions (TokenIssuer module).
@Suite("Signing key ring")
struct SigningKeyRingTests {
    /// The master key every ring of these tests seals with.
    static let masterKey = MasterKey.generate()

    /// The realm's active key, opened as `TokenSigner` opens it for signing.
    static func activeKey(_ database: any Database) async throws -> (privateKey: PrivateKey, algorithm: JWSAlgorithm) {
        let sealed = try await database.read { db in try SealedSigningKey.active(db, realmID: "acme") }
        let key = try SigningKeyCache().privateKey(kid: sealed.kid, realmID: "acme", sealed: sealed.sealed,
                                                   masterKey: masterKey, at: 0)
        return (key, sealed.algorithm)
    }

    /// A fresh migrated database of `backend` with one realm, closed afterwards.
    static func withRing(_ backend: Backend, retention: Int64 = SigningKeyRing.defaultRetiredKeyRetention,
                         _ body: (SigningKeyRing, any Database, TestClock) async throws -> Void) async throws {
        try await FreshDatabase.with(backend, migrations: RealmsSchema.migrations + TokenIssuerSchema.migrations) { database in
            let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))
            let ring = SigningKeyRing(database: database, masterKey: Self.masterKey, retiredKeyRetention: retention, now: clock.closure)
            _ = try await RealmStore(database: database, now: clock.closure).create(id: "acme", context: ChangeContext(actor: "test"))
            try await body(ring, database, clock)
        }
    }

    @Test("a key of each algorithm signs tokens its published JWK verifies", arguments: Backend.allCases, SigningAlgorithm.allCases)
    func keySignsAndPublishes(backend: Backend, algorithm: SigningAlgorithm) async throws {
        try await Self.withRing(backend) { ring, database, _ in
            let info = try await ring.rotate(realmID: "acme", algorithm: algorithm)
            #expect(info.algorithm == algorithm.rawValue && info.status == "active")
            let published = try await ring.publishedKeys(realmID: "acme").keys
            #expect(published.count == 1)
            let jwk = try #require(published.first)
            #expect(jwk.kid == info.kid && jwk.use == "sig" && jwk.alg == algorithm.rawValue)
            let active = try await Self.activeKey(database)
            let message = Array("header.payload".utf8)
            let signature = try active.privateKey.sign(message: message, algorithm: active.algorithm)
            #expect(try jwk.publicKey().verify(signature: signature, message: message, algorithm: active.algorithm))
        }
    }

    @Test("a published key whose stored JWK is unreadable is left out of the JWKS and named, not dropped silently",
          arguments: Backend.allCases)
    func unreadablePublishedKeyIsNamed(backend: Backend) async throws {
        try await Self.withRing(backend) { ring, database, _ in
            let first = try await ring.rotate(realmID: "acme", algorithm: .es256)
            let second = try await ring.rotate(realmID: "acme", algorithm: .es256)
            let intact = try await ring.publishedKeys(realmID: "acme")
            #expect(intact.keys.compactMap(\.kid) == [second.kid, first.kid])
            #expect(intact.unreadableKids.isEmpty)
            try await database.write { db in
                try db.execute("UPDATE signing_keys SET public_jwk = '{\"kty\":' WHERE kid = ?", .text(first.kid))
            }
            let damaged = try await ring.publishedKeys(realmID: "acme")
            #expect(damaged.keys.compactMap(\.kid) == [second.kid])
            #expect(damaged.unreadableKids == [first.kid])
        }
    }

    @Test("private keys are stored sealed, never as PKCS#8 in the clear", arguments: Backend.allCases)
    func sealedAtRest(backend: Backend) async throws {
        try await Self.withRing(backend) { ring, database, _ in
            _ = try await ring.rotate(realmID: "acme", algorithm: .es256)
            let active = try await Self.activeKey(database)
            let der = try active.privateKey.pkcs8DER()
            let stored = try await database.read { db in try db.queryOne("SELECT private_key FROM signing_keys")?.bytes("private_key") }
            #expect(stored != nil && stored != der)
            #expect(!Data(stored ?? []).contains(Data(der.suffix(32))))
        }
    }

    @Test("a rotated-out key stays published for the retention period, then disappears", arguments: Backend.allCases)
    func retiredKeyRetention(backend: Backend) async throws {
        try await Self.withRing(backend, retention: 3600) { ring, _, clock in
            let first = try await ring.rotate(realmID: "acme", algorithm: .es256)
            let second = try await ring.rotate(realmID: "acme", algorithm: .edDSA)
            #expect(try await ring.keys(realmID: "acme").first { $0.status == "active" }?.kid == second.kid)
            #expect(Set(try await ring.publishedKeys(realmID: "acme").keys.compactMap(\.kid)) == [first.kid, second.kid])
            clock.advance(by: 3601)
            #expect(try await ring.publishedKeys(realmID: "acme").keys.compactMap(\.kid) == [second.kid])
            #expect(try await ring.keys(realmID: "acme").map(\.status) == ["active", "retired"])
        }
    }

    @Test("deleting the realm deletes its keys", arguments: Backend.allCases)
    func keysGoWithRealm(backend: Backend) async throws {
        try await Self.withRing(backend) { ring, database, clock in
            _ = try await ring.rotate(realmID: "acme", algorithm: .es256)
            try await RealmStore(database: database, now: clock.closure).delete("acme", context: ChangeContext(actor: "test"))
            #expect(try await ring.keys(realmID: "acme").isEmpty)
        }
    }
}

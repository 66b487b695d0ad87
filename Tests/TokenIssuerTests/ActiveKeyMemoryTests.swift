import HeraldTestSupport
import JOSE
import Realms
import Storage
import Testing
@testable import TokenIssuer

@Suite("The realm's active signing key, remembered under its settings stamp")
struct ActiveKeyMemoryTests {
    @Test("""
        a rotation renews the realm's stamp and its key signs the next refresh at once; a key activated \
        without a new stamp (a node of an older version) signs only once the remembered one's trust interval ends
        """, arguments: Backend.allCases)
    func rememberedUnderTheStamp(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let sessions = fixture.tokens.sessions
        let ring = SigningKeyRing(database: fixture.database, masterKey: fixture.masterKey, now: fixture.clock.closure)
        let context = try ChangeContext(actor: "test")
        func stamp() async throws -> String {
            try await fixture.database.read { db in try #require(try RealmSettingsVersion.current(db, realmID: "acme")) }
        }
        var refreshToken = try await sessions.startSession(fixture.request(), in: fixture.database).refreshToken
        /// The kid of the access token a refresh confirming `stamp` is given.
        func signingKid(confirming stamp: String) async throws -> String? {
            let issued = try await sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                                    refreshToken: refreshToken, scope: nil, clientIP: "192.0.2.1",
                                                    settingsStamp: stamp)
            refreshToken = issued.refreshToken
            return try CompactJWS(parsing: issued.accessToken).header.kid
        }

        let first = try #require(try await ring.keys(realmID: "acme").first { $0.status == "active" }).kid
        let before = try await stamp()
        #expect(try await signingKid(confirming: before) == first)

        let second = try await ring.rotate(realmID: "acme", context: context).kid
        let after = try await stamp()
        #expect(after != before)
        #expect(try await signingKid(confirming: after) == second)

        // An older node's rotation: the stamp stays as it was.
        let third = try await ring.rotate(realmID: "acme", context: context).kid
        try await fixture.database.write { db in
            try db.execute("UPDATE realms SET settings_version = ? WHERE id = 'acme'", .text(after))
        }
        #expect(try await signingKid(confirming: after) == second)
        fixture.clock.advance(by: Double(ActiveKeyMemory.trustInterval - 1))
        #expect(try await signingKid(confirming: after) == second)
        fixture.clock.advance(by: 1)
        #expect(try await signingKid(confirming: after) == third)
    }

    @Test("a transaction that confirms no stamp always reads the key", arguments: Backend.allCases)
    func noStampReadsTheKey(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let sessions = fixture.tokens.sessions
        let ring = SigningKeyRing(database: fixture.database, masterKey: fixture.masterKey, now: fixture.clock.closure)
        let issued = try await sessions.startSession(fixture.request(), in: fixture.database)
        let stamp = try #require(try await fixture.database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") })
        let remembered = try await sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                                    refreshToken: issued.refreshToken, scope: nil, clientIP: "192.0.2.1",
                                                    settingsStamp: stamp)
        let rotated = try await ring.rotate(realmID: "acme", context: try ChangeContext(actor: "test")).kid
        try await fixture.database.write { db in
            try db.execute("UPDATE realms SET settings_version = ? WHERE id = 'acme'", .text(stamp))
        }
        let unstamped = try await sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                                   refreshToken: remembered.refreshToken, scope: nil, clientIP: "192.0.2.1")
        #expect(try CompactJWS(parsing: unstamped.accessToken).header.kid == rotated)
    }
}

import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import Realms

/// Nodes remember a realm's login settings and trust them only while its settings version is
/// the one they read (`RealmSettingsVersion`): every change to the realm, its providers or
/// its clients must renew it, and a realm created again must not get an old one back.
@Suite("Realm settings version")
struct RealmSettingsVersionTests {
    @Test("every change to a realm, its providers or its clients renews the version", arguments: Backend.allCases)
    func everyChangeRenewsIt(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            var seen: Set<String> = []
            func expectRenewed(_ change: String) async throws {
                let version = try await test.database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") }
                let current = try #require(version, "\(change): the realm has a version")
                #expect(seen.insert(current).inserted, "\(change) kept a version seen before")
            }
            try await expectRenewed("create")
            _ = try await test.realms.update("acme", changes: RealmChanges(displayName: "Acme"), context: admin)
            try await expectRenewed("realm update")
            let providers = test.appleProviders(masterKey: MasterKey.generate())
            let settings = AppleProviderSettings(clientId: "com.example.web", audiences: ["com.example.ios"])
            _ = try await providers.put(realmID: "acme", settings: settings, context: admin)
            try await expectRenewed("provider put")
            try await providers.delete(realmID: "acme", context: admin)
            try await expectRenewed("provider delete")
            let google = test.googleProviders
            _ = try await google.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: ["1-web.apps.googleusercontent.com"]),
                                     context: admin)
            try await expectRenewed("Google provider put")
            _ = try await google.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: ["1-web.apps.googleusercontent.com"],
                                                                                       hostedDomain: "acme.example"),
                                     context: admin)
            try await expectRenewed("Google provider replace")
            try await google.delete(realmID: "acme", context: admin)
            try await expectRenewed("Google provider delete")
            _ = try await test.clients.create(realmID: "acme", clientID: "backend",
                                              changes: ClientAppChanges(name: "Backend", confidential: true,
                                                                        redirectUris: ["https://b.example.com/cb"]),
                                              context: admin)
            try await expectRenewed("client create")
            _ = try await test.clients.update(realmID: "acme", clientID: "backend",
                                              changes: ClientAppChanges(enabled: false), context: admin)
            try await expectRenewed("client update")
            _ = try await test.clients.rotateSecret(realmID: "acme", clientID: "backend", context: admin)
            try await expectRenewed("client secret rotation")
            try await test.clients.delete(realmID: "acme", clientID: "backend", context: admin)
            try await expectRenewed("client delete")
            try await test.realms.delete("acme", context: admin)
            #expect(try await test.database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") } == nil)
            _ = try await test.realms.create(id: "acme", context: admin)
            try await expectRenewed("the realm created again")
        }
    }
}

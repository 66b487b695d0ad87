import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import Realms

@Suite("Google provider store")
struct GoogleProviderStoreTests {
    static let web = "123456789012-abcdefghijklmnopqrstuvwxyz012345.apps.googleusercontent.com"
    static let android = "123456789012-android0123456789abcdefghijklmn.apps.googleusercontent.com"
    static let ios = "123456789012-ios0123456789abcdefghijklmnopqrs.apps.googleusercontent.com"

    @Test("put creates the provider with defaults, then replaces it whole; load reads what was stored", arguments: Backend.allCases)
    func createAndReplace(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.googleProviders
            let created = try await store.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: [Self.web]),
                                              context: admin)
            #expect(created == GoogleProviderConfig(realmId: "acme", enabled: true, clientIds: [Self.web], hostedDomain: nil,
                                                    createdAt: 1_700_000_000, updatedAt: 1_700_000_000))
            #expect(try await store.config(realmID: "acme") == created)

            test.clock.advance(by: 60)
            let replaced = try await store.put(
                realmID: "acme",
                settings: GoogleProviderSettings(enabled: false, clientIds: [Self.ios, Self.android], hostedDomain: "acme.example"),
                context: admin)
            #expect(replaced == GoogleProviderConfig(realmId: "acme", enabled: false, clientIds: [Self.ios, Self.android],
                                                     hostedDomain: "acme.example", createdAt: 1_700_000_000,
                                                     updatedAt: 1_700_000_060))
            let loaded = try await test.database.read { db in try GoogleProviderStore.load(db, realmID: "acme") }
            #expect(loaded == replaced)
            let stored = try #require(try await test.rows("SELECT client_ids FROM google_providers").first)
            #expect(try stored.string("client_ids") == "[\"\(Self.ios)\",\"\(Self.android)\"]")

            // A replace without the hosted domain clears it: PUT is the whole configuration.
            let cleared = try await store.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: [Self.web]),
                                              context: admin)
            #expect(cleared.hostedDomain == nil)
            #expect(cleared.enabled)
            let json = String(decoding: try JSONEncoder().encode(cleared), as: UTF8.self)
            #expect(json.contains("\"hostedDomain\":null"))
        }
    }

    @Test("invalid settings name every field and change nothing", arguments: Backend.allCases)
    func invalidSettingsChangeNothing(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.googleProviders
            let missing = await realmsError { try await store.put(realmID: "acme", settings: GoogleProviderSettings(), context: admin) }
            #expect(missing?.fieldIssues.map(\.field) == ["clientIds"])
            let empty = await realmsError {
                try await store.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: []), context: admin)
            }
            #expect(empty?.fieldIssues.map(\.field) == ["clientIds"])

            let original = try await store.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: [Self.web]),
                                               context: admin)
            let version = try await test.database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") }
            let auditCount = try await test.audit.list().items.count
            let bad = GoogleProviderSettings(
                clientIds: [Self.web, "has space.apps.googleusercontent.com", Self.web, "", String(repeating: "a", count: 256),
                            "caf\u{E9}.apps.googleusercontent.com"],
                hostedDomain: "Acme.Example")
            let error = await realmsError { try await store.put(realmID: "acme", settings: bad, context: admin) }
            #expect(error?.code == .invalidInput)
            #expect(Set(error?.fieldIssues.map(\.field) ?? []) == [
                "clientIds[1]", "clientIds[2]", "clientIds[3]", "clientIds[4]", "clientIds[5]", "hostedDomain",
            ])
            #expect(try await store.config(realmID: "acme") == original)
            #expect(try await test.database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") } == version)
            #expect(try await test.audit.list().items.count == auditCount)

            let tooMany = GoogleProviderSettings(clientIds: (0...GoogleProviderConfig.maxClientIds).map { "\($0)-x.apps.googleusercontent.com" })
            #expect(await realmsError { try await store.put(realmID: "acme", settings: tooMany, context: admin) }?
                .fieldIssues.map(\.field) == ["clientIds"])
            #expect(try await store.config(realmID: "acme") == original)
        }
    }

    @Test("the hosted domain is a lower-case DNS name of at most 253 bytes", arguments: [
        ("acme.example", true), ("mail.acme-corp.co.uk", true), ("x1.io", true),
        ("localhost", false), ("Acme.example", false), ("-acme.example", false), ("acme-.example", false),
        ("acme..example", false), (".acme.example", false), ("acme.example.", false), ("acme_corp.example", false),
        ("*.acme.example", false), ("acme example", false), ("", false),
        (String(repeating: "a", count: 64) + ".example", false),
        ([String](repeating: String(repeating: "a", count: 63), count: 3).joined(separator: ".") + "." + String(repeating: "b", count: 61), true),
        ([String](repeating: String(repeating: "a", count: 63), count: 3).joined(separator: ".") + "." + String(repeating: "b", count: 62), false),
    ])
    func hostedDomainShape(domain: String, accepted: Bool) {
        let issues = GoogleProviderSettings(clientIds: [Self.web], hostedDomain: domain).fieldIssues()
        #expect(issues.isEmpty == accepted, "\(domain)")
        #expect(issues.allSatisfy { $0.field == "hostedDomain" })
    }

    @Test("client ids of any printable shape up to 255 bytes are accepted, exactly as given")
    func clientIdShapes() {
        let ids = [Self.web, "com.googleusercontent.apps.123-abc", String(repeating: "9", count: 255), "A-b_c~d!e"]
        #expect(GoogleProviderSettings(clientIds: ids).fieldIssues().isEmpty)
        // Case matters in audiences, so ids differing in case are two ids, not duplicates.
        #expect(GoogleProviderSettings(clientIds: [Self.web, Self.web.uppercased()]).fieldIssues().isEmpty)
        #expect(GoogleProviderSettings(clientIds: ["tab\there"]).fieldIssues().map(\.field) == ["clientIds[0]"])
    }

    @Test("create, update and delete are audited with the reason and the changed fields", arguments: Backend.allCases)
    func audited(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.googleProviders
            let setup = try ChangeContext(actor: "ops", reason: "web and Android clients")
            _ = try await store.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: [Self.web, Self.android]),
                                    context: setup)
            let workspace = try ChangeContext(actor: "ops", reason: "Workspace accounts only")
            _ = try await store.put(realmID: "acme",
                                    settings: GoogleProviderSettings(clientIds: [Self.web, Self.android], hostedDomain: "acme.example"),
                                    context: workspace)
            try await store.delete(realmID: "acme", context: try ChangeContext(actor: "ops", reason: "Google sign-in retired"))

            let entries = try await test.audit.list(filter: AuditFilter(target: "realms/acme/providers/google")).items
            #expect(entries.map(\.action) == ["provider.google.delete", "provider.google.update", "provider.google.create"])
            #expect(entries.map(\.reason) == ["Google sign-in retired", "Workspace accounts only", "web and Android clients"])
            let create = entries[2], update = entries[1], delete = entries[0]
            #expect(create.changes["clientIds"] == FieldChange(before: .null, after: .array([.string(Self.web), .string(Self.android)])))
            #expect(create.changes["enabled"] == FieldChange(before: .null, after: .bool(true)))
            #expect(update.changes == ["hostedDomain": FieldChange(before: .null, after: .string("acme.example"))])
            #expect(delete.changes["hostedDomain"] == FieldChange(before: .string("acme.example"), after: .null))
        }
    }

    @Test("writes on an unknown realm and deleting a missing provider are not found", arguments: Backend.allCases)
    func notFound(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let store = test.googleProviders
            let settings = GoogleProviderSettings(clientIds: [Self.web])
            #expect(await realmsError { try await store.put(realmID: "nope", settings: settings, context: admin) }?.code == .notFound)
            #expect(await realmsError { try await store.delete(realmID: "nope", context: admin) }?.code == .notFound)
            _ = try await test.realms.create(id: "acme", context: admin)
            #expect(await realmsError { try await store.delete(realmID: "acme", context: admin) }?.code == .notFound)
            _ = try await store.put(realmID: "acme", settings: settings, context: admin)
            try await store.delete(realmID: "acme", context: admin)
            #expect(try await store.config(realmID: "acme") == nil)
            #expect(try await test.rows("SELECT realm_id FROM google_providers").isEmpty)
        }
    }

    @Test("deleting the realm deletes its Google provider, and only its own", arguments: Backend.allCases)
    func cascadesWithRealm(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.realms.create(id: "other", context: admin)
            let store = test.googleProviders
            _ = try await store.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: [Self.web]), context: admin)
            _ = try await store.put(realmID: "other", settings: GoogleProviderSettings(clientIds: [Self.ios]), context: admin)
            try await test.realms.delete("acme", context: admin)
            #expect(try await test.rows("SELECT realm_id FROM google_providers").map { try $0.string("realm_id") } == ["other"])
            _ = try await test.realms.create(id: "acme", context: admin)
            #expect(try await store.config(realmID: "acme") == nil)
            #expect(try await store.config(realmID: "other")?.clientIds == [Self.ios])
        }
    }

    @Test("stored client ids that are not a JSON array of strings are an error, not an empty list", arguments: Backend.allCases)
    func unreadableClientIds(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.googleProviders
            _ = try await store.put(realmID: "acme", settings: GoogleProviderSettings(clientIds: [Self.web]), context: admin)
            try await test.database.write { db in try db.execute("UPDATE google_providers SET client_ids = '{\"a\":1}'") }
            await #expect(throws: StorageError.self) { try await store.config(realmID: "acme") }
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import Realms

@Suite("Apple provider store")
struct AppleProviderStoreTests {
    let masterKey = MasterKey.generate()

    func settings(privateKey: AppleProviderSettings.PrivateKeyUpdate = .keep) -> AppleProviderSettings {
        AppleProviderSettings(clientId: "com.example.web", audiences: ["com.example.ios", "com.example.ios.dev"],
                              teamId: "ABCDE12345", keyId: "KEY1234567", privateKey: privateKey)
    }

    @Test("a configured private key is sealed at rest, reported only as configured, and decrypts", arguments: Backend.allCases)
    func privateKeySealed(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let key = try PrivateKey.generate(for: .es256)
            let keyPEM = try pem(of: key)
            let store = test.appleProviders(masterKey: masterKey)
            let config = try await store.put(realmID: "acme", settings: settings(privateKey: .replace(keyPEM)), context: admin)
            #expect(config.privateKeyConfigured)
            #expect(config.acceptedAudiences == ["com.example.web", "com.example.ios", "com.example.ios.dev"])
            #expect(config.scopes == ["name", "email"])
            #expect(config.enabled)

            let stored = try #require(try await test.rows("SELECT private_key FROM apple_providers").first?
                .optionalBytes("private_key"))
            let der = try key.pkcs8DER()
            #expect(stored != der)
            #expect(!Data(stored).contains(Data(der.suffix(32))))
            let json = String(decoding: try JSONEncoder().encode(config), as: UTF8.self)
            #expect(!json.contains("PRIVATE KEY"))
            #expect(json.contains("\"privateKeyConfigured\":true"))

            let restored = try #require(try await store.privateKey(realmID: "acme"))
            #expect(restored.publicKey.jwk(keyID: nil) == key.publicKey.jwk(keyID: nil))
        }
    }

    @Test("a sealed key moved to another realm's row does not decrypt", arguments: Backend.allCases)
    func sealBoundToRealm(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.realms.create(id: "other", context: admin)
            let store = test.appleProviders(masterKey: masterKey)
            _ = try await store.put(realmID: "acme", settings: settings(privateKey: .replace(try pem(of: .generate(for: .es256)))),
                                    context: admin)
            _ = try await store.put(realmID: "other", settings: settings(), context: admin)
            _ = try await test.database.write { db in
                try db.execute("UPDATE apple_providers SET private_key = (SELECT private_key FROM apple_providers WHERE realm_id = 'acme') WHERE realm_id = 'other'")
            }
            await #expect(throws: JOSEError.self) { try await store.privateKey(realmID: "other") }
        }
    }

    @Test("writing without a private key keeps the stored one; remove drops it", arguments: Backend.allCases)
    func keepAndRemoveKey(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.appleProviders(masterKey: masterKey)
            _ = try await store.put(realmID: "acme", settings: settings(privateKey: .replace(try pem(of: .generate(for: .es256)))),
                                    context: admin)
            var edited = settings()
            edited.audiences = ["com.example.ios"]
            let kept = try await store.put(realmID: "acme", settings: edited, context: admin)
            #expect(kept.privateKeyConfigured)
            #expect(kept.audiences == ["com.example.ios"])
            #expect(try await store.privateKey(realmID: "acme") != nil)
            let removed = try await store.put(realmID: "acme", settings: settings(privateKey: .remove), context: admin)
            #expect(!removed.privateKeyConfigured)
            #expect(try await store.privateKey(realmID: "acme") == nil)
        }
    }

    @Test("invalid settings name every field, without echoing the key", arguments: Backend.allCases)
    func invalidSettings(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.appleProviders(masterKey: masterKey)
            let bad = AppleProviderSettings(
                clientId: nil, audiences: ["com.example.*", "com.example.ios", "com.example.ios"], teamId: "short",
                keyId: "lowercase1", privateKey: .replace("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----"),
                scopes: ["name", "phone"])
            let error = await realmsError { try await store.put(realmID: "acme", settings: bad, context: admin) }
            #expect(Set(error?.fieldIssues.map(\.field) ?? []) == [
                "clientId", "audiences[0]", "audiences[2]", "teamId", "keyId", "privateKey", "scopes[1]",
            ])
            #expect(!(error?.description.contains("not a key") ?? true))
            #expect(try await store.config(realmID: "acme") == nil)
        }
    }

    @Test("an audience repeating the Services ID is a duplicate; case differences are not", arguments: Backend.allCases)
    func audienceDuplicates(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.appleProviders(masterKey: masterKey)
            let error = await realmsError {
                try await store.put(realmID: "acme", settings: AppleProviderSettings(clientId: "com.example.web",
                                                                                    audiences: ["com.example.web"]),
                                    context: admin)
            }
            #expect(error?.fieldIssues.map(\.field) == ["audiences[0]"])
            let config = try await store.put(
                realmID: "acme", settings: AppleProviderSettings(clientId: "com.example.web", audiences: ["com.Example.web"]),
                context: admin)
            #expect(config.audiences == ["com.Example.web"])
        }
    }

    @Test("a key that is not EC P-256 is refused", arguments: Backend.allCases)
    func nonAppleKey(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.appleProviders(masterKey: masterKey)
            let error = await realmsError {
                try await store.put(realmID: "acme", settings: settings(privateKey: .replace(try pem(of: .generate(for: .edDSA)))),
                                    context: admin)
            }
            #expect(error?.fieldIssues.map(\.field) == ["privateKey"])
        }
    }

    @Test("the audit log records a key change as redacted, never the key", arguments: Backend.allCases)
    func auditRedactsKey(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.appleProviders(masterKey: masterKey)
            let keyPEM = try pem(of: .generate(for: .es256))
            _ = try await store.put(realmID: "acme", settings: settings(privateKey: .replace(keyPEM)), context: admin)
            let entry = try #require(try await test.audit.list().items.first)
            #expect(entry.action == "provider.apple.create")
            #expect(entry.changes["privateKey"] == .redactedSecret)
            #expect(entry.changes["privateKeyConfigured"] == FieldChange(before: .null, after: .bool(true)))
            let raw = try await test.rows("SELECT changes FROM admin_audit").map { try $0.string("changes") }.joined()
            #expect(!raw.contains("PRIVATE KEY"))
            let body = keyPEM.split(separator: "\n")[1]
            #expect(!raw.contains(body))
        }
    }

    @Test("provider writes on an unknown realm are not found; deleting a missing provider too", arguments: Backend.allCases)
    func notFound(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let store = test.appleProviders(masterKey: masterKey)
            #expect(await realmsError { try await store.put(realmID: "nope", settings: settings(), context: admin) }?.code
                == .notFound)
            _ = try await test.realms.create(id: "acme", context: admin)
            #expect(await realmsError { try await store.delete(realmID: "acme", context: admin) }?.code == .notFound)
            _ = try await store.put(realmID: "acme", settings: settings(), context: admin)
            try await store.delete(realmID: "acme", context: admin)
            #expect(try await store.config(realmID: "acme") == nil)
        }
    }
}

import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import Realms

@Suite("Client app store")
struct ClientAppStoreTests {
    @Test("a public client gets the defaults and no secret", arguments: Backend.allCases)
    func publicClient(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let created = try await test.clients.create(realmID: "acme", clientID: "ios", changes: ClientAppChanges(name: "iOS"),
                                                        context: admin)
            #expect(created.clientSecret == nil)
            let client = created.client
            #expect(!client.confidential && !client.firstParty && !client.ipBinding && client.enabled)
            #expect(client.allowedScopes == ["openid", "profile", "email"])
            #expect(client.redirectUris.isEmpty)
            #expect(client.accessTokenTTL == nil && client.refreshTokenTTL == nil)
            #expect(try await test.clients.client(realmID: "acme", clientID: "ios") == client)
            #expect(try await test.rows("SELECT secret_hash FROM client_apps").first?["secret_hash"] == .null)
        }
    }

    @Test("a confidential client's secret is shown once and stored only as its SHA-256", arguments: Backend.allCases)
    func confidentialSecret(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let created = try await test.clients.create(
                realmID: "acme", clientID: "backend",
                changes: ClientAppChanges(name: "Backend", confidential: true, redirectUris: ["https://b.example.com/cb"]),
                context: admin)
            let secret = try #require(created.clientSecret)
            #expect(secret.count >= 43)
            let stored = try await test.rows("SELECT secret_hash FROM client_apps").first?.optionalBytes("secret_hash")
            #expect(stored == SHA256.hash(secret))
            #expect(try await test.clients.authenticate(realmID: "acme", clientID: "backend", secret: secret) != nil)
            #expect(try await test.clients.authenticate(realmID: "acme", clientID: "backend", secret: secret + "x") == nil)
            #expect(try await test.clients.authenticate(realmID: "other", clientID: "backend", secret: secret) == nil)
        }
    }

    @Test("rotating a secret returns a new one and the old one stops working", arguments: Backend.allCases)
    func rotation(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let old = try #require(try await test.clients.create(
                realmID: "acme", clientID: "backend", changes: ClientAppChanges(name: "Backend", confidential: true),
                context: admin).clientSecret)
            let rotated = try await test.clients.rotateSecret(realmID: "acme", clientID: "backend", context: admin)
            let new = try #require(rotated.clientSecret)
            #expect(new != old)
            #expect(try await test.clients.authenticate(realmID: "acme", clientID: "backend", secret: old) == nil)
            #expect(try await test.clients.authenticate(realmID: "acme", clientID: "backend", secret: new) != nil)
        }
    }

    @Test("a public client has no secret to rotate", arguments: Backend.allCases)
    func rotatePublic(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.clients.create(realmID: "acme", clientID: "ios", changes: ClientAppChanges(name: "iOS"),
                                              context: admin)
            let error = await realmsError { try await test.clients.rotateSecret(realmID: "acme", clientID: "ios", context: admin) }
            #expect(error?.code == .invalidInput)
            #expect(await realmsError { try await test.clients.rotateSecret(realmID: "acme", clientID: "nope", context: admin) }?
                .code == .notFound)
        }
    }

    @Test("making a client confidential issues its first secret; making it public drops the secret", arguments: Backend.allCases)
    func confidentialityChanges(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.clients.create(realmID: "acme", clientID: "app", changes: ClientAppChanges(name: "App"),
                                              context: admin)
            let upgraded = try await test.clients.update(realmID: "acme", clientID: "app",
                                                         changes: ClientAppChanges(confidential: true), context: admin)
            let secret = try #require(upgraded.clientSecret)
            let renamed = try await test.clients.update(realmID: "acme", clientID: "app",
                                                        changes: ClientAppChanges(name: "Renamed"), context: admin)
            #expect(renamed.clientSecret == nil)
            #expect(try await test.clients.authenticate(realmID: "acme", clientID: "app", secret: secret) != nil)
            _ = try await test.clients.update(realmID: "acme", clientID: "app", changes: ClientAppChanges(confidential: false),
                                              context: admin)
            #expect(try await test.clients.authenticate(realmID: "acme", clientID: "app", secret: secret) == nil)
            #expect(try await test.rows("SELECT secret_hash FROM client_apps").first?["secret_hash"] == .null)
        }
    }

    @Test("a disabled client does not authenticate", arguments: Backend.allCases)
    func disabledClient(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let secret = try #require(try await test.clients.create(
                realmID: "acme", clientID: "backend", changes: ClientAppChanges(name: "B", confidential: true),
                context: admin).clientSecret)
            _ = try await test.clients.update(realmID: "acme", clientID: "backend", changes: ClientAppChanges(enabled: false),
                                              context: admin)
            #expect(try await test.clients.authenticate(realmID: "acme", clientID: "backend", secret: secret) == nil)
        }
    }

    @Test("invalid client input names every field", arguments: Backend.allCases)
    func invalidInput(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let changes = ClientAppChanges(
                redirectUris: ["https://ok.example.com/cb", "http://evil.example.com/cb", "https://ok.example.com/cb",
                               "https://x.example.com/#f"],
                allowedScopes: ["openid", "bad scope"], accessTokenTTL: .some(1))
            let error = await realmsError {
                try await test.clients.create(realmID: "acme", clientID: "bad id!", changes: changes, context: admin)
            }
            #expect(Set(error?.fieldIssues.map(\.field) ?? []) == [
                "clientId", "name", "redirectUris[1]", "redirectUris[2]", "redirectUris[3]", "allowedScopes[1]", "accessTokenTTL",
            ])
        }
    }

    @Test("client ids are unique per realm, not across realms", arguments: Backend.allCases)
    func uniquePerRealm(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.realms.create(id: "other", context: admin)
            _ = try await test.clients.create(realmID: "acme", clientID: "web", changes: ClientAppChanges(name: "W"), context: admin)
            _ = try await test.clients.create(realmID: "other", clientID: "web", changes: ClientAppChanges(name: "W"), context: admin)
            let error = await realmsError {
                try await test.clients.create(realmID: "acme", clientID: "web", changes: ClientAppChanges(name: "W"), context: admin)
            }
            #expect(error?.code == .conflict)
            #expect(await realmsError {
                try await test.clients.create(realmID: "nope", clientID: "web", changes: ClientAppChanges(name: "W"), context: admin)
            }?.code == .notFound)
        }
    }

    @Test("TTL overrides can be set and cleared", arguments: Backend.allCases)
    func ttlOverrides(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.clients.create(realmID: "acme", clientID: "web",
                                              changes: ClientAppChanges(name: "W", accessTokenTTL: 300), context: admin)
            #expect(try await test.clients.client(realmID: "acme", clientID: "web")?.accessTokenTTL == 300)
            let cleared = try await test.clients.update(realmID: "acme", clientID: "web",
                                                        changes: ClientAppChanges(accessTokenTTL: .some(nil)), context: admin)
            #expect(cleared.client.accessTokenTTL == nil)
        }
    }

    @Test("clients are listed by client id across pages", arguments: Backend.allCases)
    func paging(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            for id in ["c", "a", "b"] {
                _ = try await test.clients.create(realmID: "acme", clientID: id, changes: ClientAppChanges(name: id), context: admin)
            }
            let first = try await test.clients.list(realmID: "acme", page: PageRequest(limit: 2))
            #expect(first.items.map(\.clientId) == ["a", "b"])
            let second = try await test.clients.list(realmID: "acme", page: PageRequest(limit: 2, cursor: first.nextCursor))
            #expect(second.items.map(\.clientId) == ["c"])
            #expect(second.nextCursor == nil)
            #expect(await realmsError { try await test.clients.list(realmID: "nope") }?.code == .notFound)
        }
    }

    @Test("the audit log shows secrets as redacted and never holds one", arguments: Backend.allCases)
    func auditRedactsSecrets(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let first = try #require(try await test.clients.create(
                realmID: "acme", clientID: "backend", changes: ClientAppChanges(name: "B", confidential: true),
                context: admin).clientSecret)
            let second = try #require(try await test.clients.rotateSecret(realmID: "acme", clientID: "backend",
                                                                           context: admin).clientSecret)
            let entries = try await test.audit.list(filter: AuditFilter(target: "realms/acme/clients/backend")).items
            #expect(entries.map(\.action) == ["client.secret.rotate", "client.create"])
            #expect(entries.allSatisfy { $0.changes["clientSecret"] == .redactedSecret })
            let raw = try await test.rows("SELECT changes FROM admin_audit").map { try $0.string("changes") }.joined()
            #expect(!raw.contains(first) && !raw.contains(second))
        }
    }

    @Test("deleting a client removes it and is audited", arguments: Backend.allCases)
    func delete(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.clients.create(realmID: "acme", clientID: "web", changes: ClientAppChanges(name: "W"), context: admin)
            try await test.clients.delete(realmID: "acme", clientID: "web", context: admin)
            #expect(try await test.clients.client(realmID: "acme", clientID: "web") == nil)
            #expect(await realmsError { try await test.clients.delete(realmID: "acme", clientID: "web", context: admin) }?.code
                == .notFound)
            #expect(try await test.audit.list().items.first?.action == "client.delete")
        }
    }
}

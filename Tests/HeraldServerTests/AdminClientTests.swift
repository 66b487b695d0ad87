import Foundation
import HeraldTestSupport
import JOSE
import Realms
import TokenIssuer
import Testing
@testable import HeraldServer

@Suite("Admin API: client apps")
struct AdminClientTests {
    @Test("a confidential client's secret is shown once on create and on rotation, never on read", arguments: Backend.allCases)
    func secretShownOnce(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let created = try await herald.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": "acme-backend", "name": "Acme backend", "confidential": true,
                "redirectUris": ["https://app.acme.example/oauth/callback", "http://127.0.0.1:3000/callback"],
            ], reason: "partner onboarding")
            #expect(created.status == 201)
            #expect(created.header("Cache-Control") == "no-store")
            let secret = try #require(created.json["clientSecret"]?.stringValue)
            #expect(created.json["allowedScopes"] == ["openid", "profile", "email"])

            let read = try await herald.admin("GET", "/api/admin/realms/acme/clients/acme-backend")
            #expect(read.status == 200)
            #expect(read.json["clientSecret"] == nil)
            #expect(!read.text.contains(secret))
            let list = try await herald.admin("GET", "/api/admin/realms/acme/clients")
            #expect(!list.text.contains(secret))

            let clients = ClientAppStore(database: herald.application.services.database,
                                         sessionRevoker: SessionRevoker(now: herald.application.services.now),
                                         now: herald.application.services.now)
            #expect(try await clients.authenticate(realmID: "acme", clientID: "acme-backend", secret: secret) != nil)

            let rotated = try await herald.admin("POST", "/api/admin/realms/acme/clients/acme-backend/secret", reason: "leaked in CI")
            #expect(rotated.status == 200)
            let newSecret = try #require(rotated.json["clientSecret"]?.stringValue)
            #expect(newSecret != secret)
            #expect(try await clients.authenticate(realmID: "acme", clientID: "acme-backend", secret: secret) == nil)
            #expect(try await clients.authenticate(realmID: "acme", clientID: "acme-backend", secret: newSecret) != nil)

            let edited = try await herald.admin("PATCH", "/api/admin/realms/acme/clients/acme-backend", json: ["name": "Renamed"])
            #expect(edited.json["clientSecret"] == nil)

            let audit = try await herald.admin("GET", "/api/admin/audit?realm=acme")
            #expect(audit.items.compactMap { $0["action"]?.stringValue }
                == ["client.update", "client.secret.rotate", "client.create", "realm.create"])
            #expect(audit.items.compactMap { $0["reason"]?.stringValue } == ["leaked in CI", "partner onboarding"])
            #expect(!audit.text.contains(secret) && !audit.text.contains(newSecret))
            let logs = herald.logs.captured.joined()
            #expect(!logs.contains(secret) && !logs.contains(newSecret))
        }
    }

    @Test("a public client has no secret and cannot rotate one", arguments: Backend.allCases)
    func publicClient(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let created = try await herald.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": "ios", "name": "iOS app", "firstParty": true, "redirectUris": ["com.acme.app:/oauth"],
            ])
            #expect(created.status == 201)
            #expect(created.json["clientSecret"] == nil)
            #expect(created.json["firstParty"] == true)
            let rotate = try await herald.admin("POST", "/api/admin/realms/acme/clients/ios/secret")
            #expect(rotate.status == 400)
            #expect(rotate.fieldProblems["confidential"] != nil)
        }
    }

    @Test("invalid client input is 400 naming each field, redirect URIs by index", arguments: Backend.allCases)
    func invalidInput(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let response = try await herald.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": "has space", "redirectUris": ["https://ok.acme.example/cb", "http://evil.example/cb",
                                                          "https://ok.acme.example/cb#frag", "javascript:alert(1)"],
                "allowedScopes": ["openid", "openid"], "accessTokenTTL": 5, "ipBinding": "yes", "secret": "mine",
            ])
            #expect(response.status == 400)
            #expect(Set(response.fieldProblems.keys) == [
                "clientId", "name", "redirectUris[1]", "redirectUris[2]", "redirectUris[3]", "allowedScopes[1]",
                "accessTokenTTL", "ipBinding", "secret",
            ])
        }
    }

    @Test("client ids are unique in a realm; unknown realms and clients are 404", arguments: Backend.allCases)
    func conflictsAndMissing(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let body: JSONValue = ["clientId": "web", "name": "Web"]
            #expect(try await herald.admin("POST", "/api/admin/realms/acme/clients", json: body).status == 201)
            #expect(try await herald.admin("POST", "/api/admin/realms/acme/clients", json: body).status == 409)
            #expect(try await herald.admin("POST", "/api/admin/realms/nope/clients", json: body).status == 404)
            #expect(try await herald.admin("GET", "/api/admin/realms/nope/clients").status == 404)
            #expect(try await herald.admin("GET", "/api/admin/realms/acme/clients/missing").status == 404)
            #expect(try await herald.admin("PATCH", "/api/admin/realms/acme/clients/missing", json: ["name": "x"]).status == 404)
            #expect(try await herald.admin("POST", "/api/admin/realms/acme/clients/missing/secret").status == 404)
            #expect(try await herald.admin("DELETE", "/api/admin/realms/acme/clients/web").status == 204)
            #expect(try await herald.admin("DELETE", "/api/admin/realms/acme/clients/web").status == 404)
        }
    }

    @Test("TTL overrides are set with numbers and cleared with null", arguments: Backend.allCases)
    func ttlOverrides(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            _ = try await herald.admin("POST", "/api/admin/realms/acme/clients",
                                 json: ["clientId": "web", "name": "Web", "accessTokenTTL": 300])
            #expect(try await herald.admin("GET", "/api/admin/realms/acme/clients/web").json["accessTokenTTL"] == 300)
            let cleared = try await herald.admin("PATCH", "/api/admin/realms/acme/clients/web", json: ["accessTokenTTL": .null])
            #expect(cleared.json["accessTokenTTL"] == .null)
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Testing
@testable import HeraldServer

@Suite("Admin API: Google provider")
struct AdminGoogleProviderTests {
    static let path = "/api/admin/realms/acme/providers/google"
    static let web = "123456789012-abcdefghijklmnopqrstuvwxyz012345.apps.googleusercontent.com"
    static let android = "123456789012-android0123456789abcdefghijklmn.apps.googleusercontent.com"
    static let ios = "123456789012-ios0123456789abcdefghijklmnopqrs.apps.googleusercontent.com"

    static func settingsVersion(_ herald: RunningHerald) async throws -> String? {
        try await herald.application.services.database.read { db in try RealmSettingsVersion.current(db, realmID: "acme") }
    }

    @Test("PUT creates and replaces the provider, GET reads it, each change audited with its reason and renewing the settings version",
          arguments: Backend.allCases)
    func putReadAudit(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let initialVersion = try await Self.settingsVersion(herald)
            let put = try await herald.admin("PUT", Self.path, json: [
                "clientIds": [.string(Self.web), .string(Self.android), .string(Self.ios)],
            ], reason: "Google sign-in for web and apps")
            #expect(put.status == 200)
            #expect(put.json["realmId"] == "acme")
            #expect(put.json["enabled"] == true)
            #expect(put.json["clientIds"] == [.string(Self.web), .string(Self.android), .string(Self.ios)])
            #expect(put.json["hostedDomain"] == .null)
            let createdVersion = try await Self.settingsVersion(herald)
            #expect(createdVersion != initialVersion)

            let read = try await herald.admin("GET", Self.path)
            #expect(read.status == 200)
            #expect(read.json == put.json)

            let replaced = try await herald.admin("PUT", Self.path, json: [
                "enabled": false, "clientIds": [.string(Self.web)], "hostedDomain": "acme.example",
            ], reason: "Workspace only")
            #expect(replaced.status == 200)
            #expect(replaced.json["enabled"] == false)
            #expect(replaced.json["clientIds"] == [.string(Self.web)])
            #expect(replaced.json["hostedDomain"] == "acme.example")
            #expect(try await Self.settingsVersion(herald) != createdVersion)
            let nulled = try await herald.admin("PUT", Self.path, json: ["clientIds": [.string(Self.web)], "hostedDomain": .null])
            #expect(nulled.json["hostedDomain"] == .null)

            let audit = try await herald.admin("GET", "/api/admin/audit?target=realms/acme/providers/google")
            #expect(audit.items.compactMap { $0["action"]?.stringValue }
                == ["provider.google.update", "provider.google.update", "provider.google.create"])
            #expect(audit.items.last?["reason"] == "Google sign-in for web and apps")
            #expect(audit.items[1]["reason"] == "Workspace only")
            #expect(audit.items[1]["changes"]?["hostedDomain"] == ["before": .null, "after": "acme.example"])
        }
    }

    @Test("invalid settings are 400 naming each field, and change nothing", arguments: Backend.allCases)
    func invalidSettings(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            #expect(try await herald.admin("PUT", Self.path, json: ["clientIds": [.string(Self.web)]]).status == 200)
            let version = try await Self.settingsVersion(herald)
            let before = try await herald.admin("GET", Self.path)

            let response = try await herald.admin("PUT", Self.path, json: [
                "enabled": "yes", "clientIds": [.string(Self.web), "two words", .string(Self.web)],
                "hostedDomain": "Example.COM", "extra": true,
            ])
            #expect(response.status == 400)
            #expect(Set(response.fieldProblems.keys) == ["enabled", "clientIds[1]", "clientIds[2]", "hostedDomain", "extra"])
            let missing = try await herald.admin("PUT", Self.path, json: ["enabled": true])
            #expect(missing.status == 400)
            #expect(Set(missing.fieldProblems.keys) == ["clientIds"])
            for body: JSONValue in [
                ["clientIds": []], ["clientIds": .null], ["clientIds": .string(Self.web)], ["clientIds": [""]],
                ["clientIds": .array((0...20).map { .string("\($0)-x.apps.googleusercontent.com") })],
                ["clientIds": [.string(String(repeating: "1", count: 256))]],
            ] {
                let refused = try await herald.admin("PUT", Self.path, json: body)
                #expect(refused.status == 400, "\(body)")
                #expect(Set(refused.fieldProblems.keys) == ["clientIds"], "\(body)")
            }
            for domain in ["example", "exa mple.com", String(repeating: "a", count: 250) + ".com", "", "*.example.com"] {
                let refused = try await herald.admin("PUT", Self.path, json: ["clientIds": [.string(Self.web)],
                                                                              "hostedDomain": .string(domain)])
                #expect(Set(refused.fieldProblems.keys) == ["hostedDomain"], "\(domain)")
            }
            #expect(try await herald.admin("GET", Self.path).json == before.json)
            #expect(try await Self.settingsVersion(herald) == version)
            let audit = try await herald.admin("GET", "/api/admin/audit?target=realms/acme/providers/google")
            #expect(audit.items.count == 1)
        }
    }

    @Test("an unknown realm or a missing provider is 404; DELETE removes the provider", arguments: Backend.allCases)
    func missingAndDelete(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let body: JSONValue = ["clientIds": [.string(Self.web)]]
            #expect(try await herald.admin("PUT", "/api/admin/realms/nope/providers/google", json: body).status == 404)
            #expect(try await herald.admin("GET", "/api/admin/realms/nope/providers/google").status == 404)
            #expect(try await herald.admin("DELETE", "/api/admin/realms/nope/providers/google").status == 404)
            try await herald.createRealm("acme")
            let notConfigured = try await herald.admin("GET", Self.path)
            #expect(notConfigured.status == 404)
            #expect(notConfigured.json["message"] == "Google provider not found")
            #expect(try await herald.admin("DELETE", Self.path).status == 404)
            #expect(try await herald.admin("PUT", Self.path, json: body).status == 200)
            let version = try await Self.settingsVersion(herald)
            #expect(try await herald.admin("DELETE", Self.path, reason: "retired").status == 204)
            #expect(try await herald.admin("GET", Self.path).status == 404)
            #expect(try await Self.settingsVersion(herald) != version)
            let audit = try await herald.admin("GET", "/api/admin/audit?target=realms/acme/providers/google")
            #expect(audit.items.first?["action"] == "provider.google.delete")
            #expect(audit.items.first?["reason"] == "retired")
            // The Apple provider is a separate resource: configuring Google leaves it unconfigured.
            #expect(try await herald.admin("GET", "/api/admin/realms/acme/providers/apple").status == 404)
        }
    }

    @Test("no token is 401; another realm's token gets 404; a viewer reads but cannot write")
    func scopeAndRole() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("acme")
            try await herald.createRealm("beta")
            let body: JSONValue = ["clientIds": [.string(Self.web)]]
            #expect(try await herald.admin("PUT", Self.path, json: body).status == 200)
            for method in ["GET", "PUT", "DELETE"] {
                let anonymous = try await herald.admin(method, Self.path, json: method == "PUT" ? body : nil, token: nil)
                #expect(anonymous.status == 401, "\(method)")
            }
            let betaAdmin = try await AdminAccessScopeTests.token(herald, "beta-admin", scope: .realms(["beta"]))
            for method in ["GET", "PUT", "DELETE"] {
                let outside = try await herald.admin(method, Self.path, json: method == "PUT" ? body : nil, token: betaAdmin)
                #expect(outside.status == 404, "\(method)")
            }
            #expect(try await herald.admin("PUT", "/api/admin/realms/beta/providers/google", json: body, token: betaAdmin).status
                == 200)
            let acmeViewer = try await AdminAccessScopeTests.token(herald, "acme-viewer", role: .viewer, scope: .realms(["acme"]))
            #expect(try await herald.admin("GET", Self.path, token: acmeViewer).status == 200)
            #expect(try await herald.admin("PUT", Self.path, json: body, token: acmeViewer).status == 403)
            #expect(try await herald.admin("DELETE", Self.path, token: acmeViewer).status == 403)
            #expect(try await herald.admin("GET", Self.path).json["clientIds"] == [.string(Self.web)])
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

@Suite("Realm JWKS (created with the realm)")
struct AdminPublicKeysTests {
    @Test("creating a realm publishes one key of its signing algorithm at jwks.json",
          arguments: Backend.allCases, ["ES256", "RS256", "EdDSA"])
    func firstKeyPublished(backend: Backend, algorithm: String) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme", ["signingAlgorithm": .string(algorithm)])
            let response = try await herald.send("GET", "/api/oauth/acme/jwks.json")
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix("application/json") == true)
            let keys = try #require(response.json["keys"]?.arrayValue)
            #expect(keys.count == 1)
            #expect(keys.first?["alg"] == .string(algorithm))
            #expect(keys.first?["use"] == "sig")
            #expect(keys.first?["kid"]?.stringValue?.isEmpty == false)
            #expect(keys.first?["d"] == nil && keys.first?["p"] == nil)
            let set = try JWKSet.parse(response.body)
            #expect(set.keys.count == 1 && set.skippedCount == 0)
        }
    }

    @Test("changing the signing algorithm publishes a new key and keeps the old one", arguments: Backend.allCases)
    func algorithmChange(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let before = try await herald.send("GET", "/api/oauth/acme/jwks.json").json["keys"]?.arrayValue ?? []
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["signingAlgorithm": "EdDSA"])
            let after = try await herald.send("GET", "/api/oauth/acme/jwks.json").json["keys"]?.arrayValue ?? []
            #expect(after.compactMap { $0["alg"]?.stringValue } == ["EdDSA", "ES256"])
            #expect(after.last?["kid"] == before.first?["kid"])
            // Setting the same algorithm again does not rotate.
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["signingAlgorithm": "EdDSA"])
            #expect((try await herald.send("GET", "/api/oauth/acme/jwks.json").json["keys"]?.arrayValue ?? []).count == 2)
        }
    }

    @Test("a key whose stored JWK is unreadable is left out of jwks.json and logged, the others still served (issue #33)",
          arguments: Backend.allCases)
    func unreadableKeyIsLoggedNotSilent(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["signingAlgorithm": "EdDSA"])
            let keys = try await herald.send("GET", "/api/oauth/acme/jwks.json").json["keys"]?.arrayValue ?? []
            let kids = keys.compactMap { $0["kid"]?.stringValue }
            try #require(kids.count == 2)
            #expect(!herald.logs.captured.joined().contains("signing_key_unreadable"))
            try await herald.application.services.database.write { db in
                try db.execute("UPDATE signing_keys SET public_jwk = 'not json' WHERE kid = ?", .text(kids[1]))
            }
            let response = try await herald.send("GET", "/api/oauth/acme/jwks.json")
            #expect(response.status == 200)
            #expect(response.json["keys"]?.arrayValue?.compactMap { $0["kid"]?.stringValue } == [kids[0]])
            let warnings = herald.logs.captured.filter { $0.contains("\"signing_key_unreadable\"") }
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains(kids[1]) == true)
        }
    }

    @Test("a disabled or unknown realm answers 404 on jwks.json", arguments: Backend.allCases)
    func disabledRealmHidden(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false])
            let disabled = try await herald.send("GET", "/api/oauth/acme/jwks.json")
            #expect(disabled.status == 404)
            #expect(disabled.json["code"] == "not_found")
            #expect(try await herald.send("GET", "/api/oauth/nope/jwks.json").status == 404)
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": true])
            #expect(try await herald.send("GET", "/api/oauth/acme/jwks.json").status == 200)
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("Admin API: realms")
struct AdminRealmTests {
    @Test("a realm created with only an id has the contract's defaults", arguments: Backend.allCases)
    func createWithDefaults(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let realm = try await herald.createRealm("acme")
            #expect(realm["id"] == "acme")
            #expect(realm["displayName"] == "acme")
            #expect(realm["enabled"] == true && realm["registrationEnabled"] == true && realm["nonceRequired"] == true)
            #expect(realm["emailLinking"] == "verified")
            #expect(realm["accessTokenTTL"] == 900)
            #expect(realm["refreshTokenTTL"] == 2_592_000)
            #expect(realm["loginUrl"] == .null)
            #expect(realm["signingAlgorithm"] == "ES256")
            #expect(realm["rateLimit"] == ["failuresPerWindow": 20, "windowSeconds": 300])
            let read = try await herald.admin("GET", "/api/admin/realms/acme")
            #expect(read.status == 200)
            #expect(read.json == realm)
        }
    }

    @Test("a realm is edited with PATCH, only the given fields change, null clears the login URL", arguments: Backend.allCases)
    func edit(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme", ["loginUrl": "https://login.acme.example/apple", "displayName": "Acme"])
            let patched = try await herald.admin("PATCH", "/api/admin/realms/acme",
                                           json: ["accessTokenTTL": 600, "loginUrl": .null, "rateLimit": ["windowSeconds": 60],
                                                  "emailLinking": "never"],
                                           reason: "tighten")
            #expect(patched.status == 200)
            #expect(patched.json["accessTokenTTL"] == 600)
            #expect(patched.json["loginUrl"] == .null)
            #expect(patched.json["emailLinking"] == "never")
            #expect(patched.json["displayName"] == "Acme")
            #expect(patched.json["rateLimit"] == ["failuresPerWindow": 20, "windowSeconds": 60])
            #expect(try await herald.admin("GET", "/api/admin/realms/acme").json == patched.json)
        }
    }

    @Test("a duplicate realm id is 409; unknown realms are 404 on read, edit and delete", arguments: Backend.allCases)
    func conflictsAndMissing(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let duplicate = try await herald.admin("POST", "/api/admin/realms", json: ["id": "acme"])
            #expect(duplicate.status == 409)
            #expect(duplicate.json["code"] == "conflict")
            for (method, json) in [("GET", nil), ("PATCH", ["enabled": false] as JSONValue), ("DELETE", nil)] {
                let response = try await herald.admin(method, "/api/admin/realms/nope", json: json)
                #expect(response.status == 404, "\(method)")
                #expect(response.json["code"] == "not_found")
            }
        }
    }

    @Test("invalid input is 400 naming each field, unknown fields included", arguments: Backend.allCases)
    func invalidFieldsNamed(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let response = try await herald.admin("POST", "/api/admin/realms", json: [
                "id": "Not A Slug", "accessTokenTTL": "900", "refreshTokenTTL": 10, "acessTokenTTL": 900,
                "emailLinking": "sometimes", "loginUrl": "http://evil.example.com/", "signingAlgorithm": "HS256",
                "rateLimit": ["failuresPerWindow": 0, "burst": 3], "enabled": .null,
            ])
            #expect(response.status == 400)
            #expect(response.json["code"] == "bad_request")
            #expect(Set(response.fieldProblems.keys) == [
                "id", "accessTokenTTL", "refreshTokenTTL", "acessTokenTTL", "emailLinking", "loginUrl", "signingAlgorithm",
                "rateLimit.failuresPerWindow", "rateLimit.burst", "enabled",
            ])
            #expect(response.fieldProblems["acessTokenTTL"] == "unknown field")
            #expect(try await herald.admin("GET", "/api/admin/realms").items.isEmpty)
        }
    }

    @Test("a missing id, a non-object body or broken JSON is 400", arguments: Backend.allCases)
    func malformedBodies(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let missing = try await herald.admin("POST", "/api/admin/realms", json: ["displayName": "x"])
            #expect(missing.status == 400)
            #expect(missing.fieldProblems["id"] != nil)
            for body in ["[]", "\"acme\"", "{\"id\":", "", "{\"id\":\"a\",\"id\":\"b\"}"] {
                #expect(try await herald.admin("POST", "/api/admin/realms", rawBody: body).status == 400, "\(body)")
            }
        }
    }

    @Test("realms are listed in pages with an opaque cursor; limit is bounded", arguments: Backend.allCases)
    func listPaging(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            for id in ["c-realm", "a-realm", "b-realm"] { try await herald.createRealm(id) }
            let first = try await herald.admin("GET", "/api/admin/realms?limit=2")
            #expect(first.items.compactMap { $0["id"]?.stringValue } == ["a-realm", "b-realm"])
            let cursor = try #require(first.json["nextCursor"]?.stringValue)
            let second = try await herald.admin("GET", "/api/admin/realms?limit=2&cursor=\(cursor)")
            #expect(second.items.compactMap { $0["id"]?.stringValue } == ["c-realm"])
            #expect(second.json["nextCursor"] == .null)
            for query in ["limit=0", "limit=201", "limit=abc", "cursor=%21%21"] {
                let response = try await herald.admin("GET", "/api/admin/realms?\(query)")
                #expect(response.status == 400, "\(query)")
                #expect(response.fieldProblems.count == 1)
            }
        }
    }

    @Test("deleting a realm answers 204 and the realm is gone", arguments: Backend.allCases)
    func delete(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            #expect(try await herald.admin("DELETE", "/api/admin/realms/acme", reason: "decommissioned").status == 204)
            #expect(try await herald.admin("GET", "/api/admin/realms/acme").status == 404)
            #expect(try await herald.send("GET", "/api/oauth/acme/jwks.json").status == 404)
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("Admin API: Apple provider")
struct AdminAppleProviderTests {
    @Test("the private key is write-only: accepted on PUT, never returned, kept when left out, removed by null", arguments: Backend.allCases)
    func privateKeyWriteOnly(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let key = try pemText(.generate(for: .es256))
            let put = try await herald.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                "clientId": "com.acme.web", "audiences": ["com.acme.ios", "com.acme.ios.widget"], "teamId": "ABCDE12345",
                "keyId": "KEY1234567", "privateKey": .string(key),
            ], reason: "initial Apple setup")
            #expect(put.status == 200)
            #expect(put.json["privateKeyConfigured"] == true)
            #expect(put.json["privateKey"] == nil)
            #expect(put.json["enabled"] == true)
            #expect(put.json["scopes"] == ["name", "email"])
            #expect(!put.text.contains("PRIVATE KEY"))

            let read = try await herald.admin("GET", "/api/admin/realms/acme/providers/apple")
            #expect(read.status == 200)
            #expect(read.json["audiences"] == ["com.acme.ios", "com.acme.ios.widget"])
            #expect(read.json["privateKeyConfigured"] == true)
            #expect(!read.text.contains("PRIVATE KEY"))

            let kept = try await herald.admin("PUT", "/api/admin/realms/acme/providers/apple",
                                        json: ["clientId": "com.acme.web", "audiences": ["com.acme.ios"]])
            #expect(kept.json["privateKeyConfigured"] == true)
            #expect(kept.json["teamId"] == .null)
            let removed = try await herald.admin("PUT", "/api/admin/realms/acme/providers/apple",
                                           json: ["clientId": "com.acme.web", "privateKey": .null])
            #expect(removed.json["privateKeyConfigured"] == false)

            let audit = try await herald.admin("GET", "/api/admin/audit?target=realms/acme/providers/apple")
            #expect(audit.items.count == 3)
            #expect(audit.items.last?["reason"] == "initial Apple setup")
            #expect(audit.items.last?["changes"]?["privateKey"] == ["before": "[redacted]", "after": "[redacted]"])
            #expect(!audit.text.contains("PRIVATE KEY"))
            #expect(!herald.logs.captured.joined().contains("PRIVATE KEY"))
        }
    }

    @Test("invalid provider settings are 400 naming each field, the key text never echoed", arguments: Backend.allCases)
    func invalidSettings(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let response = try await herald.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                "audiences": ["com.acme.*", "com.acme.ios", "com.acme.ios"], "teamId": "abc", "keyId": 12,
                "privateKey": "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LW5vdC1hLWtleQ==\n-----END PRIVATE KEY-----\n",
                "scopes": ["openid"], "extra": true,
            ])
            #expect(response.status == 400)
            #expect(Set(response.fieldProblems.keys) == [
                "clientId", "audiences[0]", "audiences[2]", "teamId", "keyId", "privateKey", "scopes[0]", "extra",
            ])
            #expect(!response.text.contains("c2VjcmV0LW5vdC1hLWtleQ"))
            #expect(try await herald.admin("GET", "/api/admin/realms/acme/providers/apple").status == 404)
        }
    }

    @Test("an unknown realm or a missing provider is 404", arguments: Backend.allCases)
    func missing(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            #expect(try await herald.admin("PUT", "/api/admin/realms/nope/providers/apple", json: ["clientId": "com.acme.web"]).status
                == 404)
            #expect(try await herald.admin("GET", "/api/admin/realms/nope/providers/apple").status == 404)
            try await herald.createRealm("acme")
            #expect(try await herald.admin("GET", "/api/admin/realms/acme/providers/apple").status == 404)
            #expect(try await herald.admin("DELETE", "/api/admin/realms/acme/providers/apple").status == 404)
            _ = try await herald.admin("PUT", "/api/admin/realms/acme/providers/apple", json: ["clientId": "com.acme.web"])
            #expect(try await herald.admin("DELETE", "/api/admin/realms/acme/providers/apple").status == 204)
            #expect(try await herald.admin("GET", "/api/admin/realms/acme/providers/apple").status == 404)
        }
    }
}

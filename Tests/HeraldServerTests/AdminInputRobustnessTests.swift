import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Hostile or careless bodies sent to every writing admin route: never a 5xx, and every
/// refusal in the error envelope.
@Suite("Admin API: no 5xx on bad input")
struct AdminInputRobustnessTests {
    static let bodies: [String] = [
        "", "null", "[]", "42", "\"text\"", "{", "{}", "{\"a\":1}", "{\"id\":null}", "{\"id\":[]}", "{\"id\":{}}",
        "{\"id\":\"acme\",\"accessTokenTTL\":1e400}", "{\"id\":\"acme\",\"accessTokenTTL\":9223372036854775807}",
        "{\"id\":\"acme\",\"accessTokenTTL\":-9223372036854775808}", "{\"id\":\"acme\",\"accessTokenTTL\":1.5}",
        "{\"clientId\":\"x\",\"name\":\"\\u0000\"}", "{\"clientId\":\"\(String(repeating: "c", count: 5000))\",\"name\":\"n\"}",
        "{\"redirectUris\":[1,2,3]}", "{\"redirectUris\":\"https://a.example/cb\"}", "{\"name\":{\"givenName\":7}}",
        "{\"rateLimit\":[]}", "{\"rateLimit\":{\"windowSeconds\":\"60\"}}", "{\"audiences\":[null]}",
        "{\"privateKey\":\"-----BEGIN PRIVATE KEY-----\\n\\n-----END PRIVATE KEY-----\"}", "{\"status\":\"DELETED\"}",
        "{\"id\":\"\\ud800\"}", "\u{FEFF}{}",
    ]

    @Test("every writing admin route answers odd bodies without a 5xx", arguments: Backend.allCases)
    func neverServerErrors(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            _ = try await herald.admin("POST", "/api/admin/realms/acme/clients", json: ["clientId": "web", "name": "Web"])
            let account = try await herald.accounts.create(realmID: "acme", .init(email: "a@example.com"))
            let routes = [
                ("POST", "/api/admin/realms"), ("PATCH", "/api/admin/realms/acme"),
                ("PUT", "/api/admin/realms/acme/providers/apple"), ("POST", "/api/admin/realms/acme/clients"),
                ("PATCH", "/api/admin/realms/acme/clients/web"), ("PATCH", "/api/admin/realms/acme/accounts/\(account.id)"),
            ]
            for (method, path) in routes {
                for body in Self.bodies {
                    let response = try await herald.admin(method, path, rawBody: body)
                    #expect(response.status < 500, "\(method) \(path) \(body.prefix(60)) → \(response.status)")
                    if response.status >= 300 {
                        #expect((400..<500).contains(response.status) && response.json["code"]?.stringValue != nil)
                    } else {
                        #expect(body == "{}", "only the empty change may succeed: \(method) \(path) \(body.prefix(60))")
                    }
                }
            }
            #expect(!herald.logs.captured.contains { $0.contains("unhandled_error") })
        }
    }
}

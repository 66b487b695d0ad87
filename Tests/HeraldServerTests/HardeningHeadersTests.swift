import Foundation
import Testing
@testable import HeraldServer

/// Response headers and file modes that keep what Herald answers and stores out of other
/// hands: browsers' content sniffing, caches, plain-http downgrades, other local users.
@Suite struct HardeningHeadersTests {
    @Test func everyResponseCarriesNosniffErrorsIncluded() async throws {
        try await RunningHerald.with { herald in
            let health = try await herald.send("GET", "/healthz")
            let missing = try await herald.send("GET", "/no/such/route")
            let unauthorized = try await herald.send("GET", "/api/admin/realms")
            let jwks = try await herald.send("GET", "/api/oauth/none/jwks.json")
            for response in [health, missing, unauthorized, jwks] {
                #expect(response.header("X-Content-Type-Options") == "nosniff")
            }
            #expect(unauthorized.status == 401)
        }
    }

    @Test func adminResponsesCarryingPersonalDataAreNoStore() async throws {
        try await RunningHerald.with { herald in
            _ = try await herald.createRealm("acme")
            let realms = try await herald.admin("GET", "/api/admin/realms")
            let accounts = try await herald.admin("GET", "/api/admin/realms/acme/accounts")
            let audit = try await herald.admin("GET", "/api/admin/audit")
            for response in [realms, accounts, audit] {
                #expect(response.status == 200)
                #expect(response.header("Cache-Control") == "no-store")
            }
        }
    }

    @Test func hstsIsSentOnlyWhenThePublicURLIsHTTPS() async throws {
        try await RunningHerald.with(configure: { $0.publicURL = "https://idp.example.com" }) { herald in
            let response = try await herald.send("GET", "/healthz")
            #expect(response.header("Strict-Transport-Security") == "max-age=31536000")
        }
        try await RunningHerald.with { herald in
            let response = try await herald.send("GET", "/healthz")
            #expect(response.header("Strict-Transport-Security") == nil)
        }
    }

    @Test func sqliteDatabaseAndItsWALAreCreatedOwnerOnly() async throws {
        try await RunningHerald.with { herald in
            _ = try await herald.createRealm("acme")  // a write, so the WAL holds something
            for suffix in ["", "-wal", "-shm"] {
                let attributes = try FileManager.default.attributesOfItem(atPath: herald.databasePath + suffix)
                let permissions = try #require(attributes[.posixPermissions] as? NSNumber)
                #expect(permissions.intValue & 0o777 == 0o600, "herald.db\(suffix)")
            }
        }
    }
}

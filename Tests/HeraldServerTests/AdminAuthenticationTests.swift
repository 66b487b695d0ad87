import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Testing
@testable import HeraldServer

@Suite("Admin API authentication")
struct AdminAuthenticationTests {
    /// Every admin route of the router, with parameters filled in.
    static func adminRoutes(_ herald: RunningHerald, realm: String) -> [(method: String, path: String)] {
        HeraldApplication.routeTable(services: herald.application.services)
            .filter { $0.template.hasPrefix("/api/admin") }
            .map { route in
                let path = route.template.split(separator: "/", omittingEmptySubsequences: false).map { segment in
                    switch segment {
                    case ":realm": realm
                    case let other where other.hasPrefix(":"): "x"
                    default: String(segment)
                    }
                }.joined(separator: "/")
                return (route.method, path)
            }
    }

    @Test("every admin route answers 401 without a valid token, for existing and unknown realms alike", arguments: Backend.allCases)
    func everyRouteNeedsAToken(backend: Backend) async throws {
        // Hundreds of wrong tokens from one address: the failure limit (AdminAuthenticationLimitTests) is off here.
        try await RunningHerald.with(backend: backend, configure: { $0.requestLimits.adminFailuresPerIP = nil }) { herald in
            try await herald.createRealm("acme")
            let routes = Self.adminRoutes(herald, realm: "acme") + Self.adminRoutes(herald, realm: "no-such-realm")
            #expect(routes.count >= 38)
            let credentials: [String?] = [nil, "Bearer wrong-token-0123456789abcdef0123456789", "Basic \(RunningHerald.adminToken)",
                                          "Bearer", "bearer  \(RunningHerald.adminToken)x"]
            for (method, path) in routes {
                for credential in credentials {
                    var headers: [(String, String)] = [("Content-Type", "application/json")]
                    if let credential { headers.append(("Authorization", credential)) }
                    let response = try await herald.send(method, path, headers: headers, body: Array(#"{"id":"zzz"}"#.utf8))
                    #expect(response.status == 401, "\(method) \(path) with \(credential ?? "no credential")")
                    #expect(response.json["code"]?.stringValue == "unauthorized")
                    #expect(response.header("WWW-Authenticate") == "Bearer")
                }
            }
            // Nothing was created or changed by the unauthenticated calls.
            let realms = try await herald.admin("GET", "/api/admin/realms")
            #expect(realms.items.compactMap { $0["id"]?.stringValue } == ["acme"])
        }
    }

    @Test("the bearer scheme is case-insensitive and the env token acts as 'env'", arguments: Backend.allCases)
    func schemeAndActor(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let response = try await herald.send("POST", "/api/admin/realms",
                                                 headers: [("Authorization", "bearer \(RunningHerald.adminToken)"),
                                                           ("Content-Type", "application/json")],
                                                 body: Array(#"{"id":"acme"}"#.utf8))
            #expect(response.status == 201)
            let audit = try await herald.admin("GET", "/api/admin/audit")
            #expect(audit.items.first?["actor"]?.stringValue == "env")
        }
    }

    @Test("a CLI-created token works, is recorded as the actor, and stops working when revoked", arguments: Backend.allCases)
    func cliTokens(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let database = herald.application.services.database
            let tokens = AdminTokenStore(database: database, now: herald.application.services.now)
            let cli = try ChangeContext(actor: "cli")
            let token = try await tokens.create(name: "deploy-bot", context: cli)
            let created = try await herald.admin("POST", "/api/admin/realms", json: ["id": "acme"], reason: "bootstrap", token: token)
            #expect(created.status == 201)
            let audit = try await herald.admin("GET", "/api/admin/audit?action=realm.create")
            #expect(audit.items.first?["actor"]?.stringValue == "deploy-bot")
            #expect(audit.items.first?["reason"]?.stringValue == "bootstrap")
            try await tokens.revoke(name: "deploy-bot", context: cli)
            #expect(try await herald.admin("GET", "/api/admin/realms", token: token).status == 401)
        }
    }

    @Test("the admin token never appears in logs", arguments: Backend.allCases)
    func tokenNotLogged(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            _ = try await herald.admin("GET", "/api/admin/realms")
            _ = try await herald.admin("GET", "/api/admin/realms", token: "wrong-token-that-must-not-be-logged-0123")
            let logs = herald.logs.captured.joined(separator: "\n")
            #expect(!logs.contains(RunningHerald.adminToken))
            #expect(!logs.contains("wrong-token-that-must-not-be-logged"))
        }
    }
}

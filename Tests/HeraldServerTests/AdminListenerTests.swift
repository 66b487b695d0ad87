import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Issue #16: `HERALD_ADMIN_LISTEN` moves `/api/admin/*`, `/console*` and `/metrics` to a
/// second address; the public listener answers them 404. Two loopback ports, one server.
@Suite("Admin listener")
struct AdminListenerTests {
    static let admin: [(String, String)] = [("Authorization", "Bearer \(RunningHerald.adminToken)")]

    /// Sends on its own thread (the test client blocks on its socket; see `RunningHerald.send`).
    static func send(_ client: TestHTTPClient, _ method: String, _ path: String,
                     headers: [(String, String)] = []) async throws -> TestHTTPClient.Response {
        try await offPool { try client.send(method, path, headers: headers) }
    }

    @Test("with HERALD_ADMIN_LISTEN the admin API and metrics answer only on the admin address", arguments: Backend.allCases)
    func adminRoutesMoveToTheAdminAddress(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend, configure: {
            $0.adminListen = ListenAddress(host: "127.0.0.1", port: 0)
        }) { herald in
            let adminPort = try #require(herald.application.adminPort)
            #expect(adminPort != herald.application.port)
            let adminClient = TestHTTPClient(port: adminPort)
            let publicClient = herald.client

            // The admin side on its own address.
            let created = try await offPool {
                try adminClient.send("POST", "/api/admin/realms", json: ["id": "acme"], headers: Self.admin)
            }
            #expect(created.status == 201)
            #expect(try await Self.send(adminClient, "GET", "/api/admin/realms", headers: Self.admin).status == 200)
            #expect(try await Self.send(adminClient, "GET", "/api/admin/realms/acme/events", headers: Self.admin).status == 200)
            let metrics = try await Self.send(adminClient, "GET", "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains("herald_"))
            #expect(try await Self.send(adminClient, "GET", "/console/").status == 200)
            #expect(try await Self.send(adminClient, "GET", "/healthz").status == 200)
            #expect(try await Self.send(adminClient, "GET", "/readyz").status == 200)
            // Public routes are not served there.
            #expect(try await Self.send(adminClient, "GET", "/api/oauth/acme/jwks.json").status == 404)
            #expect(try await Self.send(adminClient, "GET", "/api-docs/openapi.yaml").status == 404)

            // The public listener: 404 for the admin side, with or without a valid token (never
            // 401, which would say the route exists), public routes as before.
            for (method, path) in [("GET", "/api/admin/realms"), ("POST", "/api/admin/realms"), ("GET", "/api/admin/audit"),
                                   ("GET", "/api/admin/realms/acme/events"), ("GET", "/metrics"), ("GET", "/console"),
                                   ("GET", "/console/realms")] {
                for headers in [Self.admin, []] {
                    let response = try await Self.send(publicClient, method, path, headers: headers)
                    #expect(response.status == 404, "\(method) \(path)")
                    #expect(response.json["code"] == "not_found", "\(method) \(path)")
                }
            }
            #expect(try await Self.send(publicClient, "GET", "/api/oauth/acme/jwks.json").status == 200)
            #expect(try await Self.send(publicClient, "GET", "/healthz").status == 200)
            #expect(try await Self.send(publicClient, "GET", "/api-docs/openapi.yaml").status == 200)
        }
    }

    @Test("without HERALD_ADMIN_LISTEN everything is served on the public address")
    func unsetKeepsOneListener() async throws {
        try await RunningHerald.with { (herald: RunningHerald) async throws in
            #expect(herald.application.adminPort == nil)
            #expect(try await herald.request("GET", "/metrics").status == 200)
            #expect(try await herald.request("GET", "/api/admin/realms", headers: Self.admin).status == 200)
            #expect(try await herald.request("GET", "/api/admin/realms").status == 401)
        }
    }

    @Test("an admin address that is taken fails the start")
    func takenAdminAddressFailsStart() async throws {
        try await RunningHerald.with { first in
            let taken = first.application.port
            await #expect(throws: (any Error).self) {
                let second = try await RunningHerald.start(configure: {
                    $0.adminListen = ListenAddress(host: "127.0.0.1", port: taken)
                })
                await second.stop()
            }
        }
    }

    @Test("configuration: IP:PORT or [IPv6]:PORT, never a host name, never the public address")
    func configuration() throws {
        func load(_ value: String, port: String = "8080") throws -> HeraldConfiguration {
            try HeraldConfiguration.load(arguments: ["--port", port], environment: ["HERALD_ADMIN_LISTEN": value])
        }
        #expect(try HeraldConfiguration.load(arguments: [], environment: [:]).adminListen == nil)
        #expect(try load("127.0.0.1:9090").adminListen == ListenAddress(host: "127.0.0.1", port: 9090))
        #expect(try load("[::1]:9090").adminListen == ListenAddress(host: "::1", port: 9090))
        #expect(try HeraldConfiguration.load(arguments: ["--admin-listen", "10.0.0.5:8443"], environment: [:]).adminListen
            == ListenAddress(host: "10.0.0.5", port: 8443))
        for bad in ["localhost:9090", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:70000", "::1:9090", "[::1]9090",
                    "[127.0.0.1]:9090", "127.0.0.1:90a", ":9090", "127.0.0.1:8080"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { _ = try load(bad) }
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Synchronization
import Testing
@testable import HeraldServer

/// Issue #18: when the session behind an access token cannot be read, the routes that verify
/// access tokens answer 503 with `Retry-After` (the error envelope, or OAuth's
/// `temporarily_unavailable`), never 401 or `"active": false`: a refusal tells the app to sign
/// its user out, for an outage that will pass.
@Suite("Access tokens while their sessions cannot be read")
struct SessionReadOutageTests {
    @Test("/me, userinfo, introspection and revocation answer 503 while the sessions table is locked, and serve the token after")
    func lockedSessionsAre503() async throws {
        try await NativeLoginFixture.with(backend: .postgres, configure: { configuration in
            // A lock held past lock_timeout fails Herald's read with SQLSTATE 55P03: busy, temporary.
            guard case .postgres(let url) = configuration.database else { return }
            configuration.database = .postgres(url: url + "&options=-c%20lock_timeout%3D200")
        }) { fixture in
            let login = try await fixture.loginOK()
            let access = login["accessToken"]?.stringValue ?? ""
            let created = try await fixture.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": "backend", "name": "Backend", "confidential": true,
                "redirectUris": ["https://backend.example/callback"],
            ])
            try expectStatus(201, created)
            let secret = created.string("clientSecret")
            func inspect(_ endpoint: String) async throws -> TestHTTPClient.Response {
                let form = "token=\(access)&client_id=backend&client_secret=\(secret)"
                return try await fixture.herald.send("POST", "/api/oauth/acme/\(endpoint)",
                                                     headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                     body: Array(form.utf8))
            }
            let bearer = [("Authorization", "Bearer \(access)")]
            #expect(try await fixture.me(access).status == 200)
            guard case .postgres(let url) = fixture.herald.application.services.configuration.database else {
                Issue.record("the fixture runs on PostgreSQL")
                return
            }

            try await withSessionsTableLocked(url: url) {
                let me = try await fixture.me(access)
                #expect(me.status == 503, "\(me.status) \(me.text)")
                #expect(me.code == "service_unavailable")
                #expect(me.header("Retry-After") != nil)
                // The warning says why (the server's SQLSTATE: lock_not_available), never the URL.
                let warnings = fixture.herald.logs.captured.filter { $0.contains(#""event":"storage_unavailable""#) }
                #expect(warnings.contains { $0.contains(#""cause":"SQLSTATE 55P03"#) }, "\(warnings)")
                #expect(!warnings.contains { $0.contains("postgres://") })
                let userinfo = try await fixture.send("GET", "/api/oauth/acme/userinfo", headers: bearer)
                #expect(userinfo.status == 503, "\(userinfo.status) \(userinfo.text)")
                #expect(userinfo.code == "service_unavailable")
                for endpoint in ["introspect", "revoke"] {
                    let response = try await inspect(endpoint)
                    #expect(response.status == 503, "\(endpoint): \(response.status) \(response.text)")
                    #expect(response.json["error"] == "temporarily_unavailable", "\(endpoint)")
                    #expect(response.header("Retry-After") != nil, "\(endpoint)")
                }
            }

            #expect(try await fixture.me(access).status == 200)
            #expect(try await fixture.send("GET", "/api/oauth/acme/userinfo", headers: bearer).status == 200)
            #expect(try await inspect("introspect").json["active"] == true)
        }
    }

    /// Runs `body` while another connection holds `sessions` in ACCESS EXCLUSIVE mode.
    private func withSessionsTableLocked(url: String, _ body: () async throws -> Void) async throws {
        let locker = try PostgresDatabase(url: url, connectionCount: 1, now: { Date() })
        let lock = LockState()
        let holding = Task {
            try await locker.write { db in
                try db.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
                lock.held.store(true, ordering: .sequentiallyConsistent)
                // The body runs on the database's own thread, so waiting here blocks no task.
                while !lock.released.load(ordering: .sequentiallyConsistent) { usleep(5_000) }
            }
        }
        do {
            try await waitUntil("the sessions table is locked") { lock.held.load(ordering: .sequentiallyConsistent) }
            try await body()
        } catch {
            lock.released.store(true, ordering: .sequentiallyConsistent)
            _ = try? await holding.value
            await locker.close()
            throw error
        }
        lock.released.store(true, ordering: .sequentiallyConsistent)
        try await holding.value
        await locker.close()
    }
}

/// Whether the lock is held, and whether the test is done with it.
private final class LockState: Sendable {
    let held = Atomic<Bool>(false)
    let released = Atomic<Bool>(false)
}

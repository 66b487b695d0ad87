import Foundation
import HeraldTestSupport
import JOSE
import Synchronization
import Testing
@testable import HeraldServer

/// Issue #9: while PostgreSQL is down, Herald answers 503 (never 500, never a refusal of a
/// good token), `/readyz` says not ready, and once the database is back every node serves
/// again by itself, with every token it acknowledged still valid.
@Suite("PostgreSQL outage")
struct DatabaseOutageTests {
    @Test("a database restart in the middle of a refresh load: 503s during the outage, recovery without restarting Herald, no acknowledged token lost")
    func restartMidLoad() async throws {
        let cluster = try TestPostgres()
        defer { cluster.stop() }
        try await TwoNodeFixture.with(postgres: cluster) { nodes in
            var chains: [RefreshChain] = []
            for index in 0..<6 {
                let login = try await nodes.nodes[index % 2].loginOK(subject: "outage.\(index)")
                chains.append(RefreshChain(refreshToken: login["refreshToken"]?.stringValue ?? ""))
            }
            let load = RefreshLoad(chains: chains, nodes: nodes.nodes)
            load.start()
            do {
                try await Self.restart(cluster, under: chains, nodes: nodes)
                await load.stop()
            } catch {
                await load.stop()
                throw error
            }

            for chain in chains {
                #expect(chain.unexpected.isEmpty, "answers other than 200 or 503: \(chain.unexpected)")
                // The last acknowledged token of each chain still works, on either node.
                let final = try await nodes.b.refresh(chain.refreshToken)
                #expect(final.status == 200, "\(final.status) \(final.text)")
                #expect(try await nodes.a.me(final.string("accessToken")).status == 200)
            }
            // Nothing half-written: the outage created no session and revoked none, and the
            // admin change refused during it left nothing behind.
            let sessions = try await nodes.a.herald.application.services.database.read { db in
                (try db.queryOne("SELECT COUNT(*) AS n FROM sessions")?.int("n"),
                 try db.queryOne("SELECT COUNT(*) AS n FROM sessions WHERE revoked_at IS NOT NULL")?.int("n"))
            }
            #expect(sessions.0 == 7, "six chains and the login retried after the outage")
            #expect(sessions.1 == 0)
            #expect(try await nodes.a.admin("GET", "/api/admin/realms/during-outage").status == 404)
        }
    }

    /// Stops PostgreSQL once every chain has refreshed, checks what clients and probes see
    /// during the outage, starts it again and waits until both nodes serve every chain again.
    private static func restart(_ cluster: TestPostgres, under chains: [RefreshChain], nodes: TwoNodeFixture) async throws {
        try await waitUntil("every chain refreshed before the outage") { chains.allSatisfy { $0.successes >= 3 } }
        try cluster.stopServer()
        for node in nodes.nodes {
            let ready = try await node.send("GET", "/readyz")
            #expect(ready.status == 503)
            #expect(ready.json["status"] == "unavailable")
        }
        try await waitUntil("every chain got a 503 during the outage") { chains.allSatisfy { $0.unavailable > 0 } }
        let admin = try await nodes.a.admin("POST", "/api/admin/realms", json: ["id": "during-outage"])
        #expect(admin.status == 503)
        #expect(admin.code == "service_unavailable")
        #expect(admin.header("Retry-After") != nil)
        // A login during the outage is a 503 and consumes nothing: the same Apple token
        // signs in once the database is back.
        let nonce = nodes.b.freshNonce()
        let appleToken = nodes.b.token(subject: "outage.login", nonce: nonce)
        let login = try await nodes.b.login(token: appleToken, nonce: nonce)
        #expect(login.status == 503)
        #expect(login.code == "service_unavailable")
        // The login's log says why, as a warning beside its login line; never the URL.
        let outage = nodes.b.herald.logs.captured.filter { $0.contains(#""event":"login_outage""#) }
        #expect(outage.contains { $0.contains(#""reason":"service_unavailable""#) && $0.contains(#""cause":"#) },
                "\(outage)")
        #expect(!outage.contains { $0.contains("postgres://") })

        try cluster.start()
        let before = chains.map(\.successes)
        try await waitUntil("both nodes ready again") {
            for node in nodes.nodes where try await node.send("GET", "/readyz").status != 200 { return false }
            return true
        }
        try await waitUntil("every chain refreshed after the restart") {
            zip(chains, before).allSatisfy { chain, count in chain.successes >= count + 3 }
        }
        let retried = try await nodes.a.login(token: appleToken, nonce: nonce)
        #expect(retried.status == 200, "\(retried.status) \(retried.text)")
    }
}

/// One session refreshed over and over by one client thread: the refresh token it holds is
/// always the last one Herald acknowledged with a 200.
final class RefreshChain: Sendable {
    private let state: Mutex<(token: String, successes: Int, unavailable: Int, unexpected: [String])>

    init(refreshToken: String) { state = Mutex((refreshToken, 0, 0, [])) }

    var refreshToken: String { state.withLock { $0.token } }
    var successes: Int { state.withLock { $0.successes } }
    var unavailable: Int { state.withLock { $0.unavailable } }
    var unexpected: [String] { state.withLock { $0.unexpected } }

    /// Records an answer to a refresh of the current token.
    func record(_ response: TestHTTPClient.Response) {
        state.withLock { state in
            switch response.status {
            case 200:
                state.token = response.string("refreshToken")
                state.successes += 1
            case 503 where response.code == "service_unavailable" && response.header("Retry-After") != nil:
                state.unavailable += 1
            default:
                state.unexpected.append("\(response.status) \(response.code ?? "-")")
            }
        }
    }
}

/// One client thread per chain, refreshing on the nodes in turn until stopped.
final class RefreshLoad: Sendable {
    private let chains: [RefreshChain]
    private let nodes: [NativeLoginFixture]
    private let running = Atomic<Bool>(false)
    private let finished = DispatchGroup()

    init(chains: [RefreshChain], nodes: [NativeLoginFixture]) {
        self.chains = chains
        self.nodes = nodes
    }

    func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        for (index, chain) in chains.enumerated() {
            finished.enter()
            Thread { [self] in
                var turn = index
                while running.load(ordering: .sequentiallyConsistent) {
                    turn += 1
                    do {
                        let response = try nodes[turn % nodes.count].refreshBlocking(chain.refreshToken)
                        chain.record(response)
                        // A client backing off on 503, as Retry-After asks (shortened: the
                        // outage is seconds long and the test wants many attempts in it).
                        if response.status == 503 { usleep(20_000) }
                    } catch {
                        chain.record(TestHTTPClient.Response(status: 0, headers: [], body: Array("\(error)".utf8)))
                    }
                }
                finished.leave()
            }.start()
        }
    }

    /// Stops every thread and waits (without blocking a pool thread) for their last requests.
    func stop() async {
        running.store(false, ordering: .sequentiallyConsistent)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finished.notify(queue: .global()) { continuation.resume() }
        }
    }
}

/// Polls `condition` (every 50 ms, up to 60 s) and fails with `what` if it never holds.
func waitUntil(_ what: String, timeout: TimeInterval = 60,
               _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try await !condition() {
        guard Date() < deadline else { throw TestClientError("timed out waiting until \(what)") }
        try await Task.sleep(for: .milliseconds(50))
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The real `herald serve` binary, killed with SIGKILL in the middle of native logins and
/// refreshes, then restarted on the same database: every refresh token a client was given
/// in a 200 still works (or, when its own refresh was in flight at the kill, was rotated and
/// now counts as reuse), SQLite is intact, and no account, session or refresh token is
/// half-written.
@Suite("Crash safety of herald serve")
struct CrashSafetyTests {
    /// `HERALD_BINARY` (set by `make test`), else `herald` beside the test bundle, which
    /// `swift build --build-tests` puts there.
    static let binary: String? = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald").path
        let candidates: [String?] = [ProcessInfo.processInfo.environment["HERALD_BINARY"], beside]
        return candidates.compactMap { $0 }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test("SIGKILL under login and refresh load: acknowledged refresh tokens survive, the database is intact",
          .enabled(if: binary != nil, "no herald binary: run `swift build --build-tests` or set HERALD_BINARY"))
    func sigkillUnderLoadLosesNothingAcknowledged() async throws {
        let binary = try #require(Self.binary)
        let folder = try TemporaryDirectory()
        let apple = try FakeJWKSServer(document: fakeAppleKeys.document)
        defer { apple.stop() }
        let database = folder.file("herald.db")

        for cycle in 0..<3 {
            let server = try await HeraldChild.start(binary: binary, database: database, appleJWKS: apple.url.absoluteString)
            let client = TestHTTPClient(port: server.port)
            if cycle == 0 { try await offPool { try CrashLoad.provision(client) } }
            // Tokens acknowledged before the previous kill work after the restart.
            if cycle > 0 { try await offPool { try CrashLoad.expectSurvivors(client) } }

            let load = CrashLoad(client: client, killAfter: Int.random(in: 15...60), cycle: cycle) { server.kill() }
            let unexpected = await load.run(workers: 4)
            #expect(unexpected.isEmpty, "before the kill: \(unexpected.prefix(10))")
            #expect(load.killed, "the load ended before the kill")
            let killed = try await server.waitForExit()
            #expect(killed.signal == SIGKILL, "herald serve ended with \(killed), not SIGKILL")
            try await Self.expectConsistent(databasePath: database)
            CrashLoad.ledger.withLock { $0.merge(load.families.withLock { $0 }) { _, new in new } }
        }

        // A final start proves the last kill's tokens too, then a clean stop.
        let server = try await HeraldChild.start(binary: binary, database: database, appleJWKS: apple.url.absoluteString)
        try await offPool { try CrashLoad.expectSurvivors(TestHTTPClient(port: server.port)) }
        server.terminate()
        let stopped = try await server.waitForExit()
        #expect(stopped.succeeded, "herald serve ended with \(stopped) after SIGTERM")
        try await Self.expectConsistent(databasePath: database)
    }

    /// `PRAGMA integrity_check`, foreign keys, and no half-written account, session or token.
    static func expectConsistent(databasePath: String) async throws {
        let database = try SQLiteDatabase(path: databasePath, now: { Date() })
        let checks = try await database.read { db -> [String: Int64] in
            func count(_ sql: String) throws -> Int64 { try db.queryOne(sql)?.int("n") ?? -1 }
            let integrity = try db.query("PRAGMA integrity_check").map { try $0.string("integrity_check") }
            return [
                "integrity_check not ok": integrity == ["ok"] ? 0 : 1,
                "foreign key violations": Int64(try db.query("PRAGMA foreign_key_check").count),
                "accounts without an identity": try count("""
                    SELECT COUNT(*) AS n FROM accounts a WHERE a.status != 'deleted'
                    AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.account_id = a.id)
                    """),
                "identities without an account": try count("""
                    SELECT COUNT(*) AS n FROM identities i WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = i.account_id)
                    """),
                "sessions without an account": try count("""
                    SELECT COUNT(*) AS n FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = s.account_id)
                    """),
                "sessions without a refresh token": try count("""
                    SELECT COUNT(*) AS n FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.session_id = s.id)
                    """),
                "refresh tokens without a session": try count("""
                    SELECT COUNT(*) AS n FROM refresh_tokens r WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = r.session_id)
                    """),
                "sessions with two current refresh tokens": try count("""
                    SELECT COUNT(*) AS n FROM (SELECT session_id FROM refresh_tokens WHERE rotated_at IS NULL
                    GROUP BY session_id HAVING COUNT(*) > 1)
                    """),
                "sessions": try count("SELECT COUNT(*) AS n FROM sessions"),
            ]
        }
        await database.close()
        for (name, value) in checks where name != "sessions" {
            #expect(value == 0, "\(name): \(value)")
        }
        #expect((checks["sessions"] ?? 0) > 0, "the load created no session")
    }
}

/// One `herald serve` child process on a free loopback port.
final class HeraldChild: Sendable {
    let process: ChildProcess
    let port: UInt16

    private init(process: ChildProcess, port: UInt16) {
        self.process = process
        self.port = port
    }

    static func start(binary: String, database: String, appleJWKS: String) async throws -> HeraldChild {
        let port = try freePort()
        var environment = ChildProcess.inheritedEnvironment.filter { !$0.key.hasPrefix("HERALD_") }
        environment["HERALD_ADMIN_TOKEN"] = RunningHerald.adminToken
        let process = try ChildProcess(
            executable: binary,
            arguments: ["serve", "--host", "127.0.0.1", "--port", String(port), "--database", "sqlite:\(database)",
                        "--apple-jwks-url", appleJWKS, "--log-level", "info"],
            environment: environment, standardOutput: .discarded, standardError: .pipe)
        let child = HeraldChild(process: process, port: port)
        guard let handle = process.standardError else { throw TestClientError("herald's log has no pipe") }
        // Its log is drained for its whole life (a full pipe would stall the server); the
        // "listening" line says it is ready.
        let ready = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread {
                var announced = false
                var seen: [UInt8] = []
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    guard !announced else { continue }
                    seen += data
                    if String(decoding: seen, as: UTF8.self).contains("\"listening\"") {
                        announced = true
                        continuation.resume(returning: true)
                    }
                }
                if !announced { continuation.resume(returning: false) }
            }.start()
        }
        guard ready else { throw TestClientError("herald serve closed its log before listening") }
        return child
    }

    /// A port the kernel says is free now (the child binds it right after).
    private static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw TestClientError("no free port") }
        return UInt16(bigEndian: address.sin_port)
    }

    func kill() { process.signal(SIGKILL) }
    func terminate() { process.signal(SIGTERM) }

    /// Waits on a thread of its own: waitpid blocks.
    func waitForExit() async throws -> ChildProcess.Termination {
        let process = self.process
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { () throws(ChildProcessError) in try process.waitForExit() })
            }.start()
        }
    }
}

/// Native logins, each followed by a chain of refreshes, from several threads, until the
/// `killAfter`-th success pulls the trigger. Per family it records the newest refresh token
/// seen in a 200, and whether a refresh of it was in flight when the server died.
final class CrashLoad: Sendable {
    enum Family: Sendable {
        /// The newest token from a 200; nothing was sent with it yet.
        case settled(String)
        /// A refresh with this token was sent and not answered: it may have been rotated.
        case inFlight(String)
    }

    /// Families of all finished cycles, checked again after every restart.
    static let ledger = Mutex<[String: Family]>([:])

    let client: TestHTTPClient
    let killAfter: Int
    let cycle: Int
    let trigger: @Sendable () -> Void
    let families = Mutex<[String: Family]>([:])
    private let successes = Atomic<Int>(0)
    private let killedFlag = Atomic<Bool>(false)
    private let problems = Mutex<[String]>([])

    init(client: TestHTTPClient, killAfter: Int, cycle: Int, trigger: @escaping @Sendable () -> Void) {
        self.client = client
        self.killAfter = killAfter
        self.cycle = cycle
        self.trigger = trigger
    }

    var killed: Bool { killedFlag.load(ordering: .acquiring) }

    static func provision(_ client: TestHTTPClient) throws {
        let admin = [("Authorization", "Bearer \(RunningHerald.adminToken)")]
        try expectStatus(201, client.send("POST", "/api/admin/realms", json: [
            "id": "acme", "rateLimit": ["failuresPerWindow": 1000, "windowSeconds": 300]], headers: admin))
        try expectStatus(200, client.send("PUT", "/api/admin/realms/acme/providers/apple", json: [
            "enabled": true, "clientId": "com.example.herald.web", "audiences": [.string(AppleTokenMinter.defaultAudience)],
        ], headers: admin))
        try expectStatus(201, client.send("POST", "/api/admin/realms/acme/clients", json: [
            "clientId": "ios-app", "name": "iOS app", "firstParty": true], headers: admin))
    }

    /// Runs `workers` threads until the kill; returns what went wrong before it.
    func run(workers: Int) async -> [String] {
        let group = DispatchGroup()
        for worker in 0..<workers {
            group.enter()
            Thread { [self] in
                work(worker)
                group.leave()
            }.start()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
        return problems.withLock { $0 }
    }

    private func succeeded() {
        if successes.add(1, ordering: .relaxed).newValue == killAfter {
            killedFlag.store(true, ordering: .releasing)
            trigger()
        }
    }

    /// Records a failure unless the server is gone (then the worker just stops).
    private func failed(_ text: String) {
        if !killed { problems.withLock { $0.append(text) } }
    }

    private func work(_ worker: Int) {
        var login = 0
        while !killed {
            login += 1
            let family = "c\(cycle).w\(worker).l\(login)"
            let nonce = "nonce-\(family)-\(UUID().uuidString)"
            let token = AppleTokenMinter(keys: fakeAppleKeys, now: Date()).token { spec in
                spec.claims["sub"] = .string("crash.\(family)")
                spec.claims["email"] = .string("\(family)@example.com")
                spec.claims["nonce"] = .string(AppleTokenMinter.nonceClaim(for: nonce))
            }
            let body: JSONValue = ["identityToken": .string(token), "clientId": "ios-app", "nonce": .string(nonce)]
            guard let response = try? client.send("POST", "/api/oauth/acme/apple/native-login", json: body) else {
                return failed("\(family): login transport error")
            }
            guard response.status == 200, var current = response.json["refreshToken"]?.stringValue else {
                return failed("\(family): login \(response.status) \(response.text.prefix(200))")
            }
            families.withLock { $0[family] = .settled(current) }
            succeeded()
            for _ in 0..<4 {
                if killed { return }
                families.withLock { $0[family] = .inFlight(current) }
                let body: JSONValue = ["refreshToken": .string(current), "clientId": "ios-app"]
                guard let response = try? client.send("POST", "/api/auth/acme/session/refresh", json: body) else {
                    return failed("\(family): refresh transport error")
                }
                guard response.status == 200, let next = response.json["refreshToken"]?.stringValue else {
                    return failed("\(family): refresh \(response.status) \(response.text.prefix(200))")
                }
                current = next
                families.withLock { $0[family] = .settled(current) }
                succeeded()
            }
        }
    }

    /// Every family's newest acknowledged token refreshes; a token whose refresh was in flight
    /// at the kill either refreshes (the rotation never committed) or is refused as reused
    /// (it did). Updates the ledger with the tokens this check was given.
    static func expectSurvivors(_ client: TestHTTPClient) throws {
        let families = ledger.withLock { $0 }
        #expect(!families.isEmpty)
        var updated: [String: Family] = [:]
        for (name, family) in families {
            let token: String
            switch family {
            case .settled(let value), .inFlight(let value): token = value
            }
            let response = try client.send("POST", "/api/auth/acme/session/refresh",
                                           json: ["refreshToken": .string(token), "clientId": "ios-app"])
            switch family {
            case .settled:
                #expect(response.status == 200, "\(name): acknowledged token refused: \(response.status) \(response.text.prefix(160))")
            case .inFlight:
                #expect(response.status == 200 || response.json["code"]?.stringValue == "refresh_token_revoked",
                        "\(name): in-flight token: \(response.status) \(response.text.prefix(160))")
            }
            if response.status == 200, let next = response.json["refreshToken"]?.stringValue {
                updated[name] = .settled(next)
            }
        }
        ledger.withLock { $0 = updated }
    }
}

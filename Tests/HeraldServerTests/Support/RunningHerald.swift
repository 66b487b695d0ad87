import Foundation
@testable import HeraldServer
import HeraldTestSupport
import JOSE
import Storage

/// A real Herald on 127.0.0.1 with an ephemeral port and its own SQLite file in a temp folder
/// (or, for `.postgres`, a fresh database in the shared test cluster, dropped when it stops);
/// logs are captured so tests can assert what was (not) logged.
final class RunningHerald: Sendable {
    let application: HeraldApplication
    let folder: URL
    let logs: LogCapture
    let client: TestHTTPClient
    /// A PostgreSQL server's place on the shared test cluster, given back when this value goes away.
    let slot: TestPostgresSlot?
    /// A PostgreSQL server's database, dropped by `stop()`.
    let postgres: TestPostgresDatabase?

    static let adminToken = "test-admin-token-0123456789abcdef0123456789"

    /// Starts a server on `backend`; `configure` adjusts the configuration (e.g. the Apple JWKS URL),
    /// `maintenancePause` paces its housekeeping loop (nil: the loop's own interval).
    static func start(backend: Backend = .sqlite, configure: (inout HeraldConfiguration) -> Void = { _ in },
                      now: @escaping @Sendable () -> Date = { Date() },
                      maintenancePause: (@Sendable () async -> Void)? = nil) async throws -> RunningHerald {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("herald-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = try HeraldConfiguration.load(
            arguments: ["--port", "1", "--database", "sqlite:\(folder.path)/herald.db"],
            environment: ["HERALD_ADMIN_TOKEN": adminToken, "HERALD_LOG_LEVEL": "debug"])
        configuration.port = 0
        let slot = backend == .postgres ? await TestPostgresSlot.acquire() : nil
        let postgres = backend == .postgres ? try TestPostgres.shared().createDatabase() : nil
        if let postgres {
            // PostgreSQL has no file to put a key file beside: it needs HERALD_MASTER_KEY.
            configuration.database = .postgres(url: postgres.url)
            configuration.masterKey = MasterKey.generate().encoded
            // Not the default 8: many servers share the test cluster at once (each connection is
            // a backend and a thread), and no suite needs more than 4.
            configuration.databaseConnections = 4
        }
        configure(&configuration)
        let logs = LogCapture()
        let application: HeraldApplication
        do {
            application = try await HeraldApplication.open(configuration: configuration,
                                                            logger: Logger(level: .debug, now: now, sink: logs.sink), now: now,
                                                            maintenancePause: maintenancePause)
            try application.start()
        } catch {
            await postgres?.drop()
            throw error
        }
        return RunningHerald(application: application, folder: folder, logs: logs, slot: slot, postgres: postgres)
    }

    private init(application: HeraldApplication, folder: URL, logs: LogCapture, slot: TestPostgresSlot?,
                 postgres: TestPostgresDatabase?) {
        self.application = application
        self.slot = slot
        self.postgres = postgres
        self.folder = folder
        self.logs = logs
        self.client = TestHTTPClient(port: application.port)
    }

    var databasePath: String { folder.path + "/herald.db" }

    /// Sends one request. The test client blocks on its socket, so it runs on a thread of its
    /// own: blocking a thread of Swift's cooperative pool, or of Dispatch's global queues
    /// (which the server and the database use too), starves the server while many tests run
    /// in parallel on 2 cores, until the socket times out.
    func send(_ method: String, _ path: String, headers: [(String, String)] = [],
              body: [UInt8] = []) async throws -> TestHTTPClient.Response {
        let client = self.client
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try client.send(method, path, headers: headers, body: body) })
            }.start()
        }
    }

    /// Shuts the server down and removes its files (its PostgreSQL database too).
    func stop() async {
        await application.shutdown()
        await postgres?.drop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `body` against a fresh server on `backend` and always stops it afterwards.
    static func with<T>(backend: Backend = .sqlite, configure: (inout HeraldConfiguration) -> Void = { _ in },
                        now: @escaping @Sendable () -> Date = { Date() },
                        maintenancePause: (@Sendable () async -> Void)? = nil,
                        _ body: (RunningHerald) async throws -> T) async throws -> T {
        let herald = try await start(backend: backend, configure: configure, now: now, maintenancePause: maintenancePause)
        do {
            let result = try await body(herald)
            await herald.stop()
            return result
        } catch {
            await herald.stop()
            throw error
        }
    }
}

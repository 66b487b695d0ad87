import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for tests: `initdb` into a temporary folder, a server on a
/// free loopback port (its unix socket in the same folder), removed when stopped.
///
/// Use `TestPostgres.shared()` (started lazily once per test process, stopped at process exit)
/// and `createDatabase()` or `withDatabase` for a fresh database per test, dropped when that
/// test is done; tests that stop and restart the server start their own cluster with `init()`
/// and call `stop()`.
///
/// Runs as root in CI: the cluster then belongs to the `postgres` system user (the Debian
/// package creates it) and every pg command runs through `runuser -u postgres --`. A watchdog
/// shell stops the server when the test process disappears, even if it crashed.
public final class TestPostgres: Sendable {
    /// Where Debian's `postgresql` package puts the server binaries.
    public static let binDirectory: String = {
        let base = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        let newest = versions.compactMap(Int.init).max().map(String.init) ?? "15"
        return "\(base)/\(newest)/bin"
    }()

    /// The superuser created by initdb (no password: trust authentication on loopback only).
    public static let user = "herald"

    /// The cluster's folder (data directory and socket inside).
    public let folder: String
    /// The loopback port the server listens on.
    public let port: Int
    private let databaseCounter = Atomic<Int>(0)

    private static let sharedInstance = Mutex<Result<TestPostgres, TestPostgresError>?>(nil)

    /// The process-wide cluster, started on first use and stopped at process exit.
    public static func shared() throws -> TestPostgres {
        try sharedInstance.withLock { instance in
            if let instance { return try instance.get() }
            let result = Result { () throws(TestPostgresError) -> TestPostgres in try TestPostgres() }
            instance = result
            if case .success = result {
                atexit { TestPostgres.stopShared() }
            }
            return try result.get()
        }
    }

    private static func stopShared() {
        sharedInstance.withLock { instance in
            if case .success(let cluster) = instance { cluster.stop() }
            instance = nil
        }
    }

    /// Creates and starts a new cluster; `stop()` removes it.
    public init() throws(TestPostgresError) {
        guard FileManager.default.isExecutableFile(atPath: Self.binDirectory + "/initdb") else {
            throw TestPostgresError("PostgreSQL server binaries not found in \(Self.binDirectory) (install the postgresql package: make deps)")
        }
        folder = NSTemporaryDirectory() + "herald-pg-" + UUID().uuidString.prefix(8)
        port = try Self.freePort()
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw TestPostgresError("cannot create \(folder)")
        }
        if Self.runsAsRoot {
            try Self.run("/bin/chown", ["postgres:postgres", folder], asPostgres: false)
        }
        try Self.run(Self.binDirectory + "/initdb",
                     ["-D", dataDirectory, "-U", Self.user, "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"])
        try start()
        try startWatchdog()
    }

    private var dataDirectory: String { folder + "/data" }

    /// A connection URL for `database`.
    public func url(database: String) -> String {
        "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)?connect_timeout=2"
    }

    /// Creates a fresh, empty database for one test, which drops it when done (see
    /// `TestPostgresDatabase`; `withDatabase` does both).
    public func createDatabase() throws(TestPostgresError) -> TestPostgresDatabase {
        let name = "t\(databaseCounter.add(1, ordering: .relaxed).newValue)_\(UUID().uuidString.prefix(8).lowercased())"
        try runSQL("CREATE DATABASE \(name)")
        return TestPostgresDatabase(name: name, url: url(database: name), cluster: self)
    }

    /// Runs `body` with the URL of a fresh, empty database and drops the database afterwards,
    /// also when `body` throws (connections `body` left open are ended then).
    public func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        let database = try createDatabase()
        do {
            let result = try await body(database.url)
            await database.drop()
            return result
        } catch {
            await database.drop()
            throw error
        }
    }

    /// Drops a test database, ending the sessions still connected to it (PostgreSQL 13 and up).
    func dropDatabase(_ name: String) throws(TestPostgresError) {
        try runSQL("DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
    }

    /// Runs SQL (any number of statements, as psql reads them) as the superuser in `database`,
    /// the maintenance database by default.
    func runSQL(_ statement: String, database: String = "postgres") throws(TestPostgresError) {
        try Self.run(Self.binDirectory + "/psql",
                     ["-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user, "-d", database, "-q", "-v", "ON_ERROR_STOP=1",
                      "-c", statement])
    }

    /// Starts the server (again, after `stopServer()`), waiting until it accepts connections.
    public func start() throws(TestPostgresError) {
        // max_connections: every backend-agnostic test case holds its own database open with a
        // few connections (a server: 4); the domain suites wait for a TestPostgresSlot, but the
        // Storage suites alone open about 45 databases (some 150 connections) at once.
        // max_wal_size: CREATE DATABASE writes the new database's pages to the WAL (about 4 MB
        // each), which the default 1 GB allowance let grow to 800 MB over a full run; checkpoints
        // cost little with fsync off.
        // synchronous_standby_names: a standby that never connects. Every session commits with
        // synchronous_commit=off, so none waits for it, except a transaction that asks for
        // synchronous_commit=on: its COMMIT, durable locally, then waits until the session is
        // ended, how `LostCommitTrap` loses a committed transaction's answer as a failover does.
        let options = "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=1000 -c max_wal_size=64MB -c min_wal_size=32MB -c synchronous_standby_names=herald_test_absent_standby"
        try Self.run(Self.binDirectory + "/pg_ctl",
                     ["-D", dataDirectory, "-l", folder + "/server.log", "-o", options, "-w", "-t", "60", "start"])
    }

    /// Stops the server (fast shutdown: open connections are dropped), keeping the cluster.
    public func stopServer() throws(TestPostgresError) {
        try Self.run(Self.binDirectory + "/pg_ctl", ["-D", dataDirectory, "-m", "fast", "-w", "stop"])
    }

    /// Stops the server and removes the cluster's folder.
    public func stop() {
        try? Self.run(Self.binDirectory + "/pg_ctl", ["-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Stops the server when this process is gone (checked once a second through /proc, which
    /// also works when the watchdog runs as another user).
    private func startWatchdog() throws(TestPostgresError) {
        let parent = ProcessInfo.processInfo.processIdentifier
        let script = "while [ -d /proc/\(parent) ]; do sleep 1; done; \(Self.runsAsRoot ? "/usr/sbin/runuser -u postgres -- " : "")\(Self.binDirectory)/pg_ctl -D \(dataDirectory) -m immediate stop >/dev/null 2>&1; rm -rf \(folder)"
        do {
            // Never waited for: it outlives this process by design.
            _ = try ChildProcess(executable: "/usr/bin/setsid", arguments: ["/bin/sh", "-c", script])
        } catch {
            throw TestPostgresError("cannot start the watchdog: \(error)")
        }
    }

    private static let runsAsRoot = getuid() == 0

    /// Runs a pg command (as the postgres user when this process is root) and waits for it.
    ///
    /// A `ChildProcess` rather than Foundation's `Process`: `pg_ctl start` leaves a server
    /// behind that inherits the child's descriptors, and `Process` (like a pipe) only notices
    /// the exit when every copy of its descriptor is closed, so it would wait forever. Output
    /// goes to a file for the same reason.
    private static func run(_ executable: String, _ arguments: [String], asPostgres: Bool = true) throws(TestPostgresError) {
        let argv = (runsAsRoot && asPostgres) ? ["/usr/sbin/runuser", "-u", "postgres", "--", executable] + arguments : [executable] + arguments
        let outputPath = NSTemporaryDirectory() + "herald-pg-output-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let termination: ChildProcess.Termination
        do {
            let child = try ChildProcess(executable: argv[0], arguments: Array(argv.dropFirst()),
                                         standardOutput: .file(outputPath), standardError: .standardOutput)
            termination = try child.waitForExit()
        } catch {
            throw TestPostgresError("cannot run \(argv[0]): \(error)")
        }
        guard termination.succeeded else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw TestPostgresError("\((executable as NSString).lastPathComponent) \(arguments.first ?? "") failed (\(termination)): \(text)")
        }
    }

    /// A free loopback port below the kernel's ephemeral range (32768 and up here): every
    /// other test binds port 0, so a cluster stopped and restarted by a test cannot lose its
    /// port to a server that another test started meanwhile.
    private static func freePort() throws(TestPostgresError) -> Int {
        for _ in 0..<200 {
            let candidate = Int.random(in: 20_000..<30_000)
            if isFree(candidate) { return candidate }
        }
        throw TestPostgresError("no free port between 20000 and 30000")
    }

    private static func isFree(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

/// Why the test cluster could not be set up.
public struct TestPostgresError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public let description: String
    init(_ description: String) { self.description = description }
}

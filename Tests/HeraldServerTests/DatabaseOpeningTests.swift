import Foundation
import HeraldTestSupport
import Synchronization
import Testing
@testable import HeraldServer

/// Opening the database at start-up (or for `herald migrate`) waits off the cooperative pool.
@Suite struct DatabaseOpeningTests {
    private final class Count: Sendable {
        let value = Mutex(0)
    }

    @Test("opens waiting on a PostgreSQL server that never answers hold no cooperative thread")
    func opensWaitOffTheCooperativePool() async throws {
        let server = try SilentServer()
        defer { server.stop() }
        var silent = HeraldConfiguration()
        silent.database = .postgres(url: "postgres://herald@127.0.0.1:\(server.port)/herald?sslmode=disable&connect_timeout=60")
        silent.databaseConnections = 1
        let configuration = silent
        // More opens than the cooperative pool has threads: if each held one while its server
        // stays silent, this task could not go on until they gave up, and would find them done.
        let opens = ProcessInfo.processInfo.activeProcessorCount + 1
        let finished = Count()
        let tasks = (0..<opens).map { _ in
            Task {
                defer { finished.value.withLock { $0 += 1 } }
                _ = try await HeraldApplication.openDatabase(configuration: configuration, now: { Date() })
            }
        }
        await server.waitForConnections(opens)
        #expect(finished.value.withLock { $0 } == 0)
        // Closing the connections ends every open at once, each with the configuration's error.
        server.stop()
        for task in tasks {
            await #expect(throws: ConfigurationError.self) { try await task.value }
        }
    }
}

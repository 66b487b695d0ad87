import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Storage

/// `ConnectionPool` on its own, with stand-in connections: waiting work runs in order, one piece
/// per connection at a time, and `close` fails what waits, lets what runs finish, then closes.
@Suite("Connection pool", .timeLimit(.minutes(1)))
struct ConnectionPoolTests {
    /// A stand-in connection that records what ran on it.
    final class FakeConnection: Sendable {
        let number: Int
        /// Pieces of work running on this connection right now, and the most seen at once.
        let running = Mutex((now: 0, most: 0))
        let closed = Atomic<Bool>(false)

        init(_ number: Int) { self.number = number }

        func use<T>(_ body: () throws -> T) rethrows -> T {
            running.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
            defer { running.withLock { $0.now -= 1 } }
            return try body()
        }
    }

    /// What ran, in the order it ran.
    final class OrderLog: Sendable {
        private let log = Mutex<[Int]>([])
        var values: [Int] { log.withLock { $0 } }
        func append(_ value: Int) { log.withLock { $0.append(value) } }
    }

    @Test func workBeyondThePoolWaitsAndRunsInTheOrderItCame() async throws {
        let pool = ConnectionPool([FakeConnection(0)], label: "test.pool")
        let release = DispatchSemaphore(value: 0)
        let holder = Task { try await pool.run { connection in connection.use { release.wait() } } }
        try await waitUntil { pool.busyCount == 1 }
        let order = OrderLog()
        var waiting: [Task<Void, any Error>] = []
        for piece in 1...5 {
            waiting.append(Task { try await pool.run { _ in order.append(piece) } })
            try await waitUntil { pool.waits == piece }  // queued before the next one is handed in
        }
        #expect(pool.busyCount == 1)
        release.signal()
        try await holder.value
        for task in waiting { try await task.value }
        #expect(order.values == [1, 2, 3, 4, 5])
        // A connection is idle again just after its last piece has answered.
        try await waitUntil { pool.busyCount == 0 }
        #expect(pool.waits == 5)
    }

    @Test func eachConnectionRunsOnePieceAtATime() async throws {
        let connections = (0..<3).map(FakeConnection.init)
        let pool = ConnectionPool(connections, label: "test.pool")
        let used = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await pool.run { connection in
                        connection.use {
                            // Long enough for pieces to overlap if the pool let them.
                            Thread.sleep(forTimeInterval: 0.000_2)
                            return connection.number
                        }
                    }
                }
            }
            return try await group.reduce(into: Set<Int>()) { $0.insert($1) }
        }
        #expect(used.isSubset(of: [0, 1, 2]))
        for connection in connections {
            #expect(connection.running.withLock { $0.most } <= 1)
        }
        // A connection is idle again just after its last piece has answered.
        try await waitUntil { pool.busyCount == 0 }
    }

    @Test func closeFailsWaitingWorkLetsRunningWorkFinishThenClosesEveryConnection() async throws {
        let connections = [FakeConnection(0), FakeConnection(1)]
        let pool = ConnectionPool(connections, label: "test.pool")
        let release = DispatchSemaphore(value: 0)
        let finished = OrderLog()
        var running: [Task<Bool, any Error>] = []
        for _ in 0..<2 {
            running.append(Task {
                try await pool.run { connection in
                    connection.use { release.wait() }
                    finished.append(connection.number)
                    return connection.closed.load(ordering: .relaxed)
                }
            })
        }
        try await waitUntil { pool.busyCount == 2 }
        let waiting = Task { try await pool.run { _ in "ran" } }
        try await waitUntil { pool.waits == 1 }
        let closing = Task {
            await pool.close { connection in
                // Closed after the work running on it, on its queue.
                #expect(finished.values.count == 2)
                connection.closed.store(true, ordering: .relaxed)
            }
        }
        let waitingError = await thrownStorageError { _ = try await waiting.value }
        #expect(waitingError?.message == "the database is closed")
        #expect(connections.allSatisfy { !$0.closed.load(ordering: .relaxed) })
        release.signal()
        release.signal()
        for task in running { #expect(try await task.value == false) }
        await closing.value
        #expect(connections.allSatisfy { $0.closed.load(ordering: .relaxed) })
        await pool.close { _ in Issue.record("a second close closed a connection again") }
        let afterError = await thrownStorageError { _ = try await pool.run { _ in 1 } }
        #expect(afterError?.message == "the database is closed")
    }
}

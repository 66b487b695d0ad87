import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Storage

/// SQLite group commit (`SQLiteWriter`): writes that queue up while the writer is busy share
/// one transaction, yet each keeps its own outcome, as if it had run alone.
@Suite struct GroupCommitTests {
    /// Holds the writer with a body that waits for `gate`, queues `writes` behind it, waits
    /// until all are queued, then lets the writer go and returns every write's outcome.
    static func queuedBehindABusyWriter(_ database: SQLiteDatabase,
                                        _ writes: [@Sendable (any SQLExecutor) throws -> Void]) async throws
        -> [Result<Void, any Error>] {
        let gate = DispatchSemaphore(value: 0)
        let holding = Atomic<Bool>(false)
        let holder = Task {
            try await database.write { _ in
                holding.store(true, ordering: .sequentiallyConsistent)
                gate.wait()
            }
        }
        try await waitUntil { holding.load(ordering: .sequentiallyConsistent) }
        return try await withThrowingTaskGroup(of: (Int, Result<Void, any Error>).self) { group in
            for (index, body) in writes.enumerated() {
                group.addTask {
                    do { return (index, .success(try await database.write(body))) } catch { return (index, .failure(error)) }
                }
            }
            do {
                try await waitUntil { database.writer.queuedCount == writes.count }
            } catch {
                gate.signal()  // Let the writer go, so the failure is reported instead of hanging.
                throw error
            }
            gate.signal()
            try await holder.value
            var results = [Result<Void, any Error>?](repeating: nil, count: writes.count)
            for try await (index, result) in group { results[index] = result }
            return results.map { $0! }
        }
    }

    @Test func queuedWritesShareOneCommitAndAFailingOneIsUndoneAlone() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)") }
            // Writes 0..<30 insert key i; writes 30..<40 insert a marker row, then a key that
            // write i-30 already inserted: they fail, and their marker must go with them.
            let writes: [@Sendable (any SQLExecutor) throws -> Void] = (0..<40).map { index in
                { db in
                    if index >= 30 { try db.execute("INSERT INTO t (k) VALUES (?)", .integer(Int64(1_000 + index))) }
                    try db.execute("INSERT INTO t (k) VALUES (?)", .integer(Int64(index % 30)))
                }
            }
            let commitsBefore = database.writer.commitCount
            let results = try await Self.queuedBehindABusyWriter(database, writes)
            for (index, result) in results.enumerated() {
                if index < 30 {
                    #expect((try? result.get()) != nil, "write \(index)")
                } else {
                    #expect(throws: StorageError.self) { try result.get() }
                    if case .failure(let error as StorageError) = result { #expect(error.code == .uniqueViolation) }
                }
            }
            let keys = try await database.read { try $0.query("SELECT k FROM t ORDER BY k").map { try $0.int("k") } }
            #expect(keys == Array(0..<30).map(Int64.init))
            // The busy writer's own commit, then one for the 40 queued writes.
            #expect(database.writer.commitCount == commitsBefore + 2)
        }
    }

    @Test func everyCommitIsCountedWithTheWritesItCarried() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)") }
            let before = database.commitBatches.snapshot
            let writes: [@Sendable (any SQLExecutor) throws -> Void] = (0..<20).map { index in
                { db in try db.execute("INSERT INTO t (k) VALUES (?)", .integer(Int64(index))) }
            }
            _ = try await Self.queuedBehindABusyWriter(database, writes)
            let after = database.commitBatches.snapshot
            // The busy writer's lone write (bucket ≤ 1), then the 20 queued ones together (≤ 32).
            let added = zip(after.bucketCounts, before.bucketCounts).map { $0 - $1 }
            #expect(added == [1, 0, 0, 0, 0, 1, 0])
            #expect(after.writes - before.writes == 21)
            #expect(after.commits == database.writer.commitCount)
        }
    }

    @Test func aBodyThatEndsTheSharedTransactionFailsAloneAndTheOthersRunAgainOnTheirOwn() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)") }
            let writes: [@Sendable (any SQLExecutor) throws -> Void] = (0..<10).map { index in
                { db in
                    try db.execute("INSERT INTO t (k) VALUES (?)", .integer(Int64(index)))
                    // Misuse: ends the transaction it shares with the writes queued before it.
                    if index == 5 { try db.execute("ROLLBACK") }
                }
            }
            let results = try await Self.queuedBehindABusyWriter(database, writes)
            for (index, result) in results.enumerated() {
                #expect(((try? result.get()) != nil) == (index != 5), "write \(index)")
            }
            let keys = try await database.read { try $0.query("SELECT k FROM t ORDER BY k").map { try $0.int("k") } }
            #expect(keys == [0, 1, 2, 3, 4, 6, 7, 8, 9])
        }
    }
    @Test func queuedWritesWhoseSavepointBodiesReturnShareOneCommitWithoutAnySavepoint() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)") }
            let runs = RunCounts(20)
            let writes: [@Sendable (any SQLExecutor) throws -> Void] = (0..<20).map { index in
                { db in
                    runs.count(index)
                    _ = try db.withSavepoint("part") { try db.execute("INSERT INTO t (k) VALUES (?)", .integer(Int64(index))) }
                }
            }
            let commitsBefore = database.writer.commitCount
            let before = try await database.writer.savepointCounts()
            let results = try await Self.queuedBehindABusyWriter(database, writes)
            let after = try await database.writer.savepointCounts()
            #expect(results.allSatisfy { (try? $0.get()) != nil })
            #expect(runs.all == Array(repeating: 1, count: 20))
            #expect(after.opened == before.opened)
            #expect(after.replays == before.replays)
            #expect(database.writer.commitCount == commitsBefore + 2)
            let keys = try await database.read { try $0.query("SELECT k FROM t ORDER BY k").map { try $0.int("k") } }
            #expect(keys == Array(0..<20).map(Int64.init))
        }
    }

    @Test func aRefusalReplaysTheSharedTransactionWithSavepointsAndTheNextOnesUseThemAtOnce() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)") }
            struct Refused: Error {}
            let runs = RunCounts(10)
            // Write 4's savepoint body throws and the write goes on; write 7 throws out of its body.
            let writes: [@Sendable (any SQLExecutor) throws -> Void] = (0..<10).map { index in
                { db in
                    runs.count(index)
                    try db.execute("INSERT INTO t (k) VALUES (?)", .integer(Int64(index)))
                    if index == 4 {
                        do {
                            try db.withSavepoint("part") {
                                try db.execute("INSERT INTO t (k) VALUES (200)")
                                throw Refused()
                            }
                        } catch is Refused {
                            try db.execute("INSERT INTO t (k) VALUES (300)")
                        }
                    }
                    if index == 7 { throw Refused() }
                }
            }
            let before = try await database.writer.savepointCounts()
            let results = try await Self.queuedBehindABusyWriter(database, writes)
            let replayed = try await database.writer.savepointCounts()
            for (index, result) in results.enumerated() {
                #expect(((try? result.get()) != nil) == (index != 7), "write \(index)")
            }
            // Writes 0...4 ran without savepoints until write 4's part threw; that was rolled
            // back, and all ran again with a savepoint around each write and one around write 4's part.
            #expect(runs.all == [2, 2, 2, 2, 2, 1, 1, 1, 1, 1])
            #expect(replayed.replays == before.replays + 1)
            #expect(replayed.opened == before.opened + 11)
            let keys = try await database.read { try $0.query("SELECT k FROM t ORDER BY k").map { try $0.int("k") } }
            #expect(keys == [0, 1, 2, 3, 4, 5, 6, 8, 9, 300])

            // The next shared transaction opens its savepoints at once: each write runs once.
            let laterRuns = RunCounts(5)
            let later: [@Sendable (any SQLExecutor) throws -> Void] = (0..<5).map { index in
                { db in
                    laterRuns.count(index)
                    _ = try db.withSavepoint("part") { try db.execute("INSERT INTO t (k) VALUES (?)", .integer(Int64(500 + index))) }
                }
            }
            #expect(try await Self.queuedBehindABusyWriter(database, later).allSatisfy { (try? $0.get()) != nil })
            let after = try await database.writer.savepointCounts()
            #expect(laterRuns.all == Array(repeating: 1, count: 5))
            #expect(after.replays == replayed.replays)
            #expect(after.opened == replayed.opened + 10)
        }
    }
}

/// How many times each of several write bodies ran.
private final class RunCounts: Sendable {
    private let counts: Mutex<[Int]>

    init(_ writes: Int) { counts = Mutex(Array(repeating: 0, count: writes)) }

    func count(_ write: Int) { counts.withLock { $0[write] += 1 } }

    var all: [Int] { counts.withLock { $0 } }
}

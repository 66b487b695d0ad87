import Foundation
import Testing
@testable import Storage

@Suite("Concurrency", .timeLimit(.minutes(2)))
struct ConcurrencyTests {
    @Test(arguments: Backend.allCases)
    func concurrentReadModifyWriteIncrementsAreSerialized(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE counter (n INTEGER NOT NULL)")
                try executor.execute("INSERT INTO counter (n) VALUES (0)")
            }
            let committed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        try await busyTolerated(on: backend) {
                            try await database.write { executor in
                                // Read, then write back: lost updates would show if two bodies overlapped.
                                let n = try executor.queryOne("SELECT n FROM counter")?.int("n") ?? -1_000_000
                                try executor.execute("UPDATE counter SET n = ?", .integer(n + 1))
                            }
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            let total = try await database.read { try $0.queryOne("SELECT n FROM counter")?.int("n") }
            // SQLite's single writer runs every body; PostgreSQL may give up on some after its
            // serialization retries (.busy), but never loses an update that reported success.
            #expect(total == Int64(committed))
            #expect(backend == .postgres ? committed > 0 : committed == 200)
        }
    }

    @Test(arguments: Backend.allCases)
    func readersSeeCommittedDataWhileTheWriterIsBusy(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE event (v INTEGER)")
                try executor.execute("INSERT INTO event (v) VALUES (1)")
            }
            let (writerInside, writerInsideSignal) = AsyncStream<Void>.makeStream()
            let releaseWriter = DispatchSemaphore(value: 0)
            let writing = Task {
                try await database.write { executor in
                    try executor.execute("INSERT INTO event (v) VALUES (2)")
                    writerInsideSignal.yield()
                    releaseWriter.wait()  // Holds the write transaction open, on the writer's Dispatch thread.
                }
            }
            var iterator = writerInside.makeAsyncIterator()
            await iterator.next()
            let during: [Int64]
            do {
                // Two reads at once: both readers work while the write lock is held.
                async let first = database.read { try $0.query("SELECT v FROM event ORDER BY v").map { try $0.int("v") } }
                async let second = database.read { try $0.query("SELECT v FROM event ORDER BY v").map { try $0.int("v") } }
                during = try await first
                #expect(try await second == [1])
            } catch {
                releaseWriter.signal()
                throw error
            }
            releaseWriter.signal()
            try await writing.value
            #expect(during == [1])  // The uncommitted row is invisible.
            let after = try await database.read { try $0.query("SELECT v FROM event ORDER BY v").map { try $0.int("v") } }
            #expect(after == [1, 2])
        }
    }

    @Test(arguments: Backend.allCases)
    func manyConcurrentReadsShareOneReader(backend: Backend) async throws {
        try await withDatabase(backend, readerCount: 1) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE n (v INTEGER)")
                try executor.execute("INSERT INTO n (v) VALUES (7)")
            }
            let sum = try await withThrowingTaskGroup(of: Int64.self) { group in
                for _ in 0..<100 {
                    group.addTask { try await database.read { try $0.queryOne("SELECT v FROM n")?.int("v") ?? 0 } }
                }
                return try await group.reduce(0, +)
            }
            #expect(sum == 700)
        }
    }

    @Test(arguments: Backend.allCases)
    func interleavedReadsAndWritesSeeOnlyCommittedStates(backend: Backend) async throws {
        try await withDatabase(backend, readerCount: 3) { database in
            try await database.write { executor in
                // Every write keeps a + b == 100; a read seeing a half-done write would break it.
                try executor.execute("CREATE TABLE account (a INTEGER NOT NULL, b INTEGER NOT NULL)")
                try executor.execute("INSERT INTO account VALUES (100, 0)")
            }
            let sums = try await withThrowingTaskGroup(of: Int64?.self) { group in
                for index in 0..<100 {
                    if index.isMultiple(of: 2) {
                        group.addTask {
                            _ = try await busyTolerated(on: backend) {
                                try await database.write { executor in
                                    try executor.execute("UPDATE account SET a = a - 1")
                                    try executor.execute("UPDATE account SET b = b + 1")
                                }
                            }
                            return nil
                        }
                    } else {
                        group.addTask {
                            try await database.read { executor in
                                let row = try executor.queryOne("SELECT a, b FROM account")
                                return try (row?.int("a") ?? 0) + (row?.int("b") ?? 0)
                            }
                        }
                    }
                }
                var sums: [Int64] = []
                for try await sum in group { if let sum { sums.append(sum) } }
                return sums
            }
            #expect(sums.count == 50)
            #expect(sums.allSatisfy { $0 == 100 })
            let final = try await database.read { try $0.queryOne("SELECT a, b FROM account") }
            #expect(try (final?.int("a") ?? 0) + (final?.int("b") ?? 0) == 100)
            if backend == .sqlite {
                #expect(final?["a"] == .integer(50))
            }
        }
    }
}

/// Runs `write`; true when it committed. On PostgreSQL a write that still conflicted after its
/// retries fails with `.busy`, which counts as not committed; any other error is rethrown.
private func busyTolerated(on backend: Backend, _ write: () async throws -> Void) async throws -> Bool {
    do {
        try await write()
        return true
    } catch let error as StorageError where backend == .postgres && error.code == .busy {
        return false
    }
}

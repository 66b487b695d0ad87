import Foundation
import Synchronization
import Testing
@testable import Storage

@Suite("Savepoints")
struct SavepointTests {
    private func values(in database: any Database) async throws -> [Int64] {
        try await database.read { try $0.query("SELECT v FROM event ORDER BY v").map { try $0.int("v") } }
    }

    @Test(arguments: Backend.allCases)
    func aThrowingBodyUndoesOnlyItselfAndTheTransactionCommitsTheRest(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE event (v INTEGER PRIMARY KEY)") }
            let marker = MarkerError(id: UUID())
            let caught = try await database.write { executor -> Bool in
                try executor.execute("INSERT INTO event (v) VALUES (1)")
                do {
                    try executor.withSavepoint("inner") {
                        try executor.execute("INSERT INTO event (v) VALUES (2)")
                        throw marker
                    }
                } catch let error as MarkerError where error == marker {
                    // After the undo the transaction goes on (on PostgreSQL too) and sees no 2.
                    try executor.execute("INSERT INTO event (v) VALUES (3)")
                    return try executor.queryOne("SELECT count(*) AS c FROM event WHERE v = 2")?.int("c") == 0
                }
                return false
            }
            #expect(caught)
            #expect(try await values(in: database) == [1, 3])
        }
    }

    @Test(arguments: Backend.allCases)
    func aFailedStatementInsideIsUndoneWithTheRestOfTheBody(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE event (v INTEGER PRIMARY KEY)") }
            try await database.write { executor in
                try executor.execute("INSERT INTO event (v) VALUES (1)")
                do {
                    try executor.withSavepoint("inner") {
                        try executor.execute("INSERT INTO event (v) VALUES (2)")
                        try executor.execute("INSERT INTO event (v) VALUES (1)")  // primary key violation
                    }
                    Issue.record("the duplicate insert did not throw")
                } catch let error as StorageError {
                    #expect(error.code == .uniqueViolation)
                }
            }
            #expect(try await values(in: database) == [1])
        }
    }

    @Test(arguments: Backend.allCases)
    func aReturningBodyKeepsItsChanges(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE event (v INTEGER PRIMARY KEY)") }
            let answer = try await database.write { executor in
                try executor.withSavepoint("inner") { () throws -> Int in
                    try executor.execute("INSERT INTO event (v) VALUES (7)")
                    return 42
                }
            }
            #expect(answer == 42)
            #expect(try await values(in: database) == [7])
        }
    }
}

/// SQLite's writer runs a write without savepoints first and replays it with them only when a
/// `withSavepoint` body threw (`SQLiteConnection.SavepointMode`).
@Suite("Savepoints on SQLite: optimistic first")
struct OptimisticSavepointTests {
    @Test func aWriteWhoseSavepointBodiesReturnOpensNoSavepointAndRunsOnce() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE event (v INTEGER PRIMARY KEY)") }
            let runs = Atomic<Int>(0)
            let before = try await database.writer.savepointCounts()
            try await database.write { executor in
                runs.add(1, ordering: .relaxed)
                _ = try executor.withSavepoint("inner") { try executor.execute("INSERT INTO event (v) VALUES (1)") }
                _ = try executor.withSavepoint("again") { try executor.execute("INSERT INTO event (v) VALUES (2)") }
            }
            let after = try await database.writer.savepointCounts()
            #expect(runs.load(ordering: .relaxed) == 1)
            #expect(after.opened == before.opened)
            #expect(after.replays == before.replays)
            #expect(try await database.read { try $0.query("SELECT v FROM event ORDER BY v").map { try $0.int("v") } } == [1, 2])
        }
    }

    @Test func aThrowingSavepointBodyReplaysTheWriteWithSavepointsFromTheStart() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE event (v INTEGER PRIMARY KEY)") }
            let runs = Atomic<Int>(0)
            let before = try await database.writer.savepointCounts()
            let answer = try await database.write { executor -> String in
                runs.add(1, ordering: .relaxed)
                try executor.execute("INSERT INTO event (v) VALUES (1)")
                do {
                    try executor.withSavepoint("inner") {
                        try executor.execute("INSERT INTO event (v) VALUES (2)")
                        throw MarkerError(id: UUID())
                    }
                } catch is MarkerError {
                    // The optimistic attempt sees its 2 still here; the replay must not.
                    let twos = try executor.queryOne("SELECT count(*) AS c FROM event WHERE v = 2")?.int("c")
                    try executor.execute("INSERT INTO event (v) VALUES (3)")
                    return twos == 0 ? "undone" : "still there"
                }
                return "not thrown"
            }
            let after = try await database.writer.savepointCounts()
            #expect(answer == "undone")
            #expect(runs.load(ordering: .relaxed) == 2)
            #expect(after.opened == before.opened + 1)
            #expect(after.replays == before.replays + 1)
            #expect(try await database.read { try $0.query("SELECT v FROM event ORDER BY v").map { try $0.int("v") } } == [1, 3])
        }
    }
}

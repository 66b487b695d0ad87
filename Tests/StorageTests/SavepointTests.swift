import Foundation
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

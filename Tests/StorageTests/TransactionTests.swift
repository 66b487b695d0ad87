import Foundation
import Testing
@testable import Storage

@Suite("Transactions")
struct TransactionTests {
    private func count(_ table: String, in database: any Database) async throws -> Int64? {
        try await database.read { try $0.queryOne("SELECT count(*) AS c FROM \(table)")?.int("c") }
    }

    @Test(arguments: Backend.allCases)
    func writeCommitsWhenTheBodyReturns(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE event (v INTEGER)")
                try executor.execute("INSERT INTO event (v) VALUES (1), (2)")
            }
            #expect(try await count("event", in: database) == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func throwingBodyRollsBackEverythingAndRethrowsTheSameError(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE event (v INTEGER)") }
            let marker = MarkerError(id: UUID())
            await #expect(throws: marker) {
                try await database.write { executor in
                    try executor.execute("INSERT INTO event (v) VALUES (1)")
                    try executor.execute("CREATE TABLE side (v INTEGER)")
                    try executor.execute("INSERT INTO event (v) VALUES (2)")
                    throw marker
                }
            }
            #expect(try await count("event", in: database) == 0)
            let sideExists = try await database.read { try tableExists("side", in: $0, backend: backend) }
            #expect(!sideExists)
            // The writer is usable again after the rollback.
            try await database.write { try $0.execute("INSERT INTO event (v) VALUES (3)") }
            #expect(try await count("event", in: database) == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func storageErrorFromBodyIsRethrownUnchangedAfterRollback(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE person (email TEXT PRIMARY KEY)")
                try executor.execute("INSERT INTO person (email) VALUES ('a@example.com')")
            }
            let error = await thrownStorageError {
                try await database.write { executor in
                    try executor.execute("INSERT INTO person (email) VALUES ('b@example.com')")
                    try executor.execute("INSERT INTO person (email) VALUES ('a@example.com')")
                }
            }
            #expect(error?.code == .uniqueViolation)
            #expect(error?.sql == "INSERT INTO person (email) VALUES ('a@example.com')")
            #expect(try await count("person", in: database) == 1)
        }
    }

    @Test(arguments: Backend.allCases)
    func readThrowingRethrowsTheSameError(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let marker = MarkerError(id: UUID())
            await #expect(throws: marker) {
                _ = try await database.read { _ -> Int in throw marker }
            }
            #expect(await database.isReachable())
        }
    }

    @Test(arguments: Backend.allCases)
    func bodyEndingTheTransactionItselfIsAnError(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let error = await thrownStorageError {
                try await database.write { try $0.execute("COMMIT") }
            }
            #expect(error?.code == .other)
            // The writer still works afterwards.
            try await database.write { try $0.execute("CREATE TABLE ok (v INTEGER)") }
        }
    }

    @Test(arguments: Backend.allCases)
    func readCannotWrite(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE event (v INTEGER)") }
            let error = await thrownStorageError {
                _ = try await database.read { try $0.execute("INSERT INTO event (v) VALUES (1)") }
            }
            #expect(error?.code == .io)
            switch backend {
            case .sqlite: #expect(error.map { $0.resultCode & 0xFF } == 8)  // SQLITE_READONLY
            case .postgres: #expect(error?.sqlState == "25006")            // read_only_sql_transaction
            }
            #expect(try await count("event", in: database) == 0)
        }
    }

    @Test(arguments: Backend.allCases)
    func readSeesOneSnapshotEvenWhenAWriteCommitsMeanwhile(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE event (v INTEGER)")
                try executor.execute("INSERT INTO event (v) VALUES (1)")
            }
            let (firstQueryDone, firstQueryDoneSignal) = AsyncStream<Void>.makeStream()
            let writeCommitted = DispatchSemaphore(value: 0)
            let reading = Task {
                try await database.read { executor in
                    let first = try executor.queryOne("SELECT count(*) AS c FROM event")?.int("c")
                    firstQueryDoneSignal.yield()
                    writeCommitted.wait()  // On the reader's own Dispatch thread, not the cooperative pool.
                    let second = try executor.queryOne("SELECT count(*) AS c FROM event")?.int("c")
                    return [first, second]
                }
            }
            var iterator = firstQueryDone.makeAsyncIterator()
            await iterator.next()
            do {
                try await database.write { try $0.execute("INSERT INTO event (v) VALUES (2)") }
            } catch {
                writeCommitted.signal()
                throw error
            }
            writeCommitted.signal()
            #expect(try await reading.value == [1, 1])
            #expect(try await count("event", in: database) == 2)
        }
    }
}

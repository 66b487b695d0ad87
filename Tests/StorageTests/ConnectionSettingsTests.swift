import Foundation
import Testing
@testable import Storage

@Suite("Opening, settings and closing")
struct ConnectionSettingsTests {
    @Test func walModeIsActive() async throws {
        try await withDatabase { database in
            let mode = try await database.read { try $0.queryOne("PRAGMA journal_mode")?.string("journal_mode") }
            #expect(mode == "wal")
            #expect(FileManager.default.fileExists(atPath: database.path + "-wal"))
        }
    }

    @Test func writerIsDurableEnforcesForeignKeysWaitsWhenBusyAndJournalsSavepointsInMemory() async throws {
        try await withDatabase { database in
            let settings = try await database.write { executor in
                [
                    try executor.queryOne("PRAGMA synchronous")?["synchronous"],
                    try executor.queryOne("PRAGMA foreign_keys")?["foreign_keys"],
                    try executor.queryOne("PRAGMA busy_timeout")?.values.first,
                    try executor.queryOne("PRAGMA temp_store")?["temp_store"],
                ]
            }
            // synchronous 2 = FULL; temp_store 2 = MEMORY
            #expect(settings == [.integer(2), .integer(1), .integer(5000), .integer(2)])
        }
    }

    @Test func readersWaitWhenBusyAndAreQueryOnly() async throws {
        try await withDatabase { database in
            let settings = try await database.read { executor in
                [
                    try executor.queryOne("PRAGMA busy_timeout")?.values.first,
                    try executor.queryOne("PRAGMA query_only")?["query_only"],
                ]
            }
            #expect(settings == [.integer(5000), .integer(1)])
        }
    }

    @Test func dataSurvivesCloseAndReopen() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("persist.db")
        let first = try SQLiteDatabase(path: path, now: { Date() })
        try await first.write { executor in
            try executor.execute("CREATE TABLE kept (v TEXT)")
            try executor.execute("INSERT INTO kept (v) VALUES ('still here')")
        }
        await first.close()
        let second = try SQLiteDatabase(path: path, now: { Date() })
        let value = try await second.read { try $0.queryOne("SELECT v FROM kept")?.string("v") }
        await second.close()
        #expect(value == "still here")
    }

    @Test func missingDirectoryFailsWithIOError() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("no-such-dir/herald.db")
        let error = #expect(throws: StorageError.self) { try SQLiteDatabase(path: path, now: { Date() }) }
        #expect(error?.code == .io)
        #expect(error?.message.contains(path) == true)
    }

    @Test func fileThatIsNotADatabaseFailsWithCorrupt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("garbage.db")
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: StorageError.self) { try SQLiteDatabase(path: path, now: { Date() }) }
        #expect(error?.code == .corrupt)
        #expect(error?.resultCode == 26)  // SQLITE_NOTADB
    }

    @Test func readerCountBelowOneIsRejected() throws {
        let directory = try TemporaryDirectory()
        let error = #expect(throws: StorageError.self) { try SQLiteDatabase(path: directory.path("x.db"), readerCount: 0, now: { Date() }) }
        #expect(error?.code == .unsupported)
    }

    @Test func isReachableUntilClosed() async throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("reach.db"), now: { Date() })
        #expect(await database.isReachable())
        await database.close()
        #expect(await !database.isReachable())
    }

    @Test func readsAndWritesFailAfterCloseAndCloseTwiceIsHarmless() async throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("closed.db"), now: { Date() })
        try await database.write { try $0.execute("CREATE TABLE t (v)") }
        await database.close()
        await database.close()
        let writeError = await thrownStorageError { try await database.write { try $0.execute("INSERT INTO t VALUES (1)") } }
        #expect(writeError?.message == "the database is closed")
        let readError = await thrownStorageError { _ = try await database.read { try $0.query("SELECT * FROM t") } }
        #expect(readError?.message == "the database is closed")
    }

    @Test func closeCheckpointsTheWriteAheadLog() async throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.path("checkpoint.db"), now: { Date() })
        try await database.write { try $0.execute("CREATE TABLE t (v)") }
        #expect(FileManager.default.fileExists(atPath: database.path + "-wal"))
        await database.close()
        // The last connection to close checkpoints and removes the WAL: all connections were closed.
        #expect(!FileManager.default.fileExists(atPath: database.path + "-wal"))
    }
}

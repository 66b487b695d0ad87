import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Storage

/// WAL checkpoints beside the writer (`SQLiteCheckpointer`): the commit that takes the WAL past
/// the threshold hands the copy to the checkpointer's connection, the writer's next commit
/// copies what that pass left over, and the write after it starts the WAL over.
@Suite struct CheckpointTests {
    private static let threshold = 16
    /// The WAL file: a 32-byte header, then frames of a 24-byte header and a 4096-byte page.
    private static func walFrames(_ path: String) throws -> Int {
        (try fileSize(path + "-wal") - 32) / (24 + 4_096)
    }

    private static func fileSize(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    /// A row of most of a page, so every write adds frames to the WAL.
    private static func insertRow(_ database: SQLiteDatabase) async throws {
        try await database.write { db in
            try db.execute("INSERT INTO t (v) VALUES (?)", .blob([UInt8](repeating: 7, count: 3_000)))
        }
    }

    @Test func aPassRunsBesideTheWriterAndTheWriterFinishesItSoTheWALStartsOver() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("checkpoint.db")
        let database = try SQLiteDatabase(path: path, checkpointThreshold: Self.threshold, now: { Date() })
        let checkpointer = database.writer.checkpointer
        try await database.write { try $0.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB NOT NULL)") }
        try await Self.insertRow(database)

        // A reader holds a snapshot of the rows so far, so a checkpoint cannot copy the frames
        // written after it (the reader may still need the pages they replace).
        let holding = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        let reader = Task {
            try await database.read { db in
                _ = try db.query("SELECT count(*) FROM t")
                holding.store(true, ordering: .sequentiallyConsistent)
                release.wait()
            }
        }
        try await waitUntil { holding.load(ordering: .sequentiallyConsistent) }
        // SQLite's own automatic checkpoint is off: below the threshold nothing is copied.
        while try Self.walFrames(path) < Self.threshold {
            #expect(checkpointer.passCount == 0)
            try await Self.insertRow(database)
        }
        // The commit that reached the threshold started one pass (after answering its write);
        // the reader kept it short of the end.
        try await waitUntil { checkpointer.passCount == 1 }
        release.signal()
        try await reader.value

        // This commit still appends, then copies the rest of the WAL itself, so the next writes
        // reuse the WAL from its start: it does not grow although they add pages.
        try await Self.insertRow(database)
        let walLength = try Self.fileSize(path + "-wal")
        try await Self.insertRow(database)
        try await Self.insertRow(database)
        #expect(try Self.fileSize(path + "-wal") == walLength)
        #expect(checkpointer.passCount == 1)
        let written = try await database.read { try $0.queryOne("SELECT count(*) AS n FROM t")?.int("n") }
        await database.close()

        // Every committed row is in the file once the WAL is gone.
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        let reopened = try SQLiteDatabase(path: path, now: { Date() })
        let count = try await reopened.read { try $0.queryOne("SELECT count(*) AS n FROM t")?.int("n") }
        #expect(count == written)
        #expect((written ?? 0) >= Self.threshold / 2)
        await reopened.close()
    }

    @Test func aThresholdBelowOneIsRefused() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: StorageError.self) {
            _ = try SQLiteDatabase(path: directory.path("refused.db"), checkpointThreshold: 0, now: { Date() })
        }
    }
}

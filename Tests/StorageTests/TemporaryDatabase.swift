import Foundation
import Testing
@testable import Storage
import HeraldTestSupport

/// A fresh directory under the system temp dir, removed when the value goes away.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("herald-storage-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }
}

/// Runs `body` with a database in a fresh temp directory, closing it and removing the directory afterwards.
func withDatabase(
    readerCount: Int = 2,
    _ body: (SQLiteDatabase) async throws -> Void
) async throws {
    let directory = try TemporaryDirectory()
    let database = try SQLiteDatabase(path: directory.path("test.db"), readerCount: readerCount, now: { Date() })
    do {
        try await body(database)
    } catch {
        await database.close()
        throw error
    }
    await database.close()
    withExtendedLifetime(directory) {}
}

/// An error type a test throws from a transaction body to check it comes back unchanged.
struct MarkerError: Error, Equatable {
    let id: UUID
}

/// The code of the `StorageError` that `body` throws; records an issue (and returns nil) when
/// it throws nothing or another error type.
func thrownCode<R>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> StorageError.Code? {
    #expect(throws: StorageError.self, sourceLocation: sourceLocation) { _ = try body() }?.code
}

/// The `StorageError` that `body` throws; records an issue (and returns nil) otherwise.
func thrownStorageError<R>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> R
) async -> StorageError? {
    await #expect(throws: StorageError.self, sourceLocation: sourceLocation) { _ = try await body() }
}

/// The shared `HeraldTestSupport.Backend`, visible to every file of this target without an import.
typealias Backend = HeraldTestSupport.Backend

/// Runs `body` with a fresh, empty database of `backend`: a SQLite file in a temp directory, or
/// a new database in the shared test PostgreSQL cluster. Closes it (and drops a PostgreSQL one) afterwards.
func withDatabase(
    _ backend: Backend,
    readerCount: Int = 2,
    _ body: (any Database) async throws -> Void
) async throws {
    switch backend {
    case .sqlite:
        try await withDatabase(readerCount: readerCount) { try await body($0) }
    case .postgres:
        try await TestPostgres.shared().withDatabase { url in
            let database = try PostgresDatabase(url: url, connectionCount: max(readerCount, 2) + 1, now: { Date() })
            do {
                try await body(database)
            } catch {
                await database.close()
                throw error
            }
            await database.close()
        }
    }
}

/// Whether a table exists, asked the way each backend can answer.
func tableExists(_ name: String, in executor: any SQLExecutor, backend: Backend) throws -> Bool {
    switch backend {
    case .sqlite:
        return try !executor.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", .text(name)).isEmpty
    case .postgres:
        return try !executor.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename = ?", .text(name)).isEmpty
    }
}

/// Polls `condition` every millisecond for up to 60 s.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(60)
    while !condition() {
        guard Date() < deadline else { throw StorageError(code: .other, message: "condition not reached in time") }
        try await Task.sleep(for: .milliseconds(1))
    }
}

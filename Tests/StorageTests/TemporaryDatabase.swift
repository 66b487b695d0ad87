import Foundation
import Testing
@testable import Storage

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
    let database = try SQLiteDatabase(path: directory.path("test.db"), readerCount: readerCount)
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

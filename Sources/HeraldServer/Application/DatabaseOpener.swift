import Foundation
import Storage

/// Opens the configured database, creating the SQLite folder when it is missing and
/// refusing one that cannot be written, each with one clear line.
enum DatabaseOpener {
    /// `connections` is PostgreSQL's pool size; SQLite's connections are its own.
    static func open(_ location: DatabaseLocation, connections: Int,
                     now: @escaping @Sendable () -> Date) throws(ConfigurationError) -> any Database {
        switch location {
        case .sqlite(let path):
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw ConfigurationError("cannot create the data folder \(folder)")
            }
            guard access(folder, W_OK) == 0 else {
                throw ConfigurationError("the data folder \(folder) is not writable")
            }
            do {
                return try SQLiteDatabase(path: path, now: now)
            } catch {
                throw ConfigurationError("cannot open the SQLite database \(path): \(error.message)")
            }
        case .postgres(let url):
            do {
                return try PostgresDatabase(url: url, connectionCount: connections, now: now)
            } catch {
                // The message comes from libpq (host, port, reason), never the password.
                throw ConfigurationError("cannot open the PostgreSQL database \(location): \(error.message)")
            }
        }
    }
}

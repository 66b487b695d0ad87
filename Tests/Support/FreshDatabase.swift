import Foundation
import Storage

/// A fresh, migrated database of one backend for one test: a SQLite file in its own temp
/// directory, or a new database in the shared test PostgreSQL cluster (`TestPostgres.shared()`).
///
/// Every domain fixture opens its database here, so each suite runs the same way on both
/// backends. `close()` releases the connections and drops a PostgreSQL database (the SQLite
/// directory goes with the value); a fixture that is simply let go releases them too, when the
/// last reference to the database goes.
public final class FreshDatabase: Sendable {
    /// The backend this database runs on.
    public let backend: Backend
    /// The database, with `migrations` applied.
    public let database: any Database
    /// Holds the SQLite file's directory until this value goes away.
    private let directory: TemporaryDirectory?
    /// Holds a PostgreSQL database's place on the shared cluster until this value goes away.
    private let slot: TestPostgresSlot?
    /// The PostgreSQL database, dropped by `close()` or once the value and its database are gone.
    private let postgres: TestPostgresDatabase?

    /// Opens a fresh database of `backend` with `connections` connections (SQLite: one writer
    /// and `connections - 1` readers) and applies `migrations`.
    public init(_ backend: Backend, migrations: [Migration], connections: Int = 3) async throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            let directory = try TemporaryDirectory()
            database = try SQLiteDatabase(path: directory.file("herald.db"), readerCount: max(connections - 1, 1), now: { Date() })
            self.directory = directory
            slot = nil
            postgres = nil
        case .postgres:
            slot = await TestPostgresSlot.acquire()
            let postgres = try TestPostgres.shared().createDatabase()
            let database: PostgresDatabase
            do {
                database = try PostgresDatabase(url: postgres.url, connectionCount: connections, now: { Date() })
            } catch {
                await postgres.drop()
                throw error
            }
            postgres.track(database)
            self.database = database
            self.postgres = postgres
            directory = nil
        }
        do {
            try await database.migrate(migrations)
        } catch {
            await database.close()
            await postgres?.drop()
            throw error
        }
    }

    /// Releases the connections and drops a PostgreSQL database (its slot is given back when this
    /// value goes away); later calls on `database` fail.
    public func close() async {
        await database.close()
        await postgres?.drop()
    }

    deinit {
        // A fixture let go without `close()`: its database object may still be held elsewhere
        // (by a store made from it), so the database is dropped only once that object is gone too.
        postgres?.dropWhenUsersAreGone()
    }

    /// Runs `body` with a fresh database of `backend`, closing it afterwards (also when `body` throws).
    public static func with<T>(_ backend: Backend, migrations: [Migration], connections: Int = 3,
                               _ body: (any Database) async throws -> T) async throws -> T {
        let fresh = try await FreshDatabase(backend, migrations: migrations, connections: connections)
        do {
            let result = try await body(fresh.database)
            await fresh.close()
            return result
        } catch {
            await fresh.close()
            throw error
        }
    }
}

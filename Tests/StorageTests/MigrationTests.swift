import Foundation
import Testing
@testable import Storage
import HeraldTestSupport

@Suite("Migrations")
struct MigrationTests {
    static let pinnedNow = Date(timeIntervalSince1970: 1_700_000_000)

    let realms1 = Migration(module: "realms", version: 1, name: "create realm", statements: [
        "CREATE TABLE realm (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
        "INSERT INTO realm (name) VALUES ('default')",
    ])
    let realms2 = Migration(module: "realms", version: 2, name: "add realm title", statements: [
        "ALTER TABLE realm ADD COLUMN title TEXT",
    ])
    let tokens1 = Migration(module: "tokens", version: 1, name: "create signing key", statements: [
        "CREATE TABLE signing_key (kid TEXT PRIMARY KEY, realm_id INTEGER NOT NULL REFERENCES realm (id))",
    ])

    /// One database that can be opened again (a SQLite file, or a PostgreSQL database, dropped
    /// once this value and every database object opened on it are gone).
    private final class Target: Sendable {
        let backend: Backend
        let directory: TemporaryDirectory?
        let postgres: TestPostgresDatabase?

        init(_ backend: Backend) throws {
            self.backend = backend
            directory = backend == .sqlite ? try TemporaryDirectory() : nil
            postgres = backend == .postgres ? try TestPostgres.shared().createDatabase() : nil
        }

        func open(now: Date = MigrationTests.pinnedNow) throws -> any Database {
            if let postgres {
                let database = try PostgresDatabase(url: postgres.url, connectionCount: 2, now: { now })
                postgres.track(database)
                return database
            }
            return try SQLiteDatabase(path: directory!.path("migrate.db"), now: { now })
        }

        deinit {
            postgres?.dropWhenUsersAreGone()
        }
    }

    private func recorded(_ database: any Database) async throws -> [String] {
        // Insertion order: rowid on SQLite, ctid on PostgreSQL (a fresh table, rows never updated).
        let order = database is PostgresDatabase ? "ctid" : "rowid"
        return try await database.read { executor in
            try executor.query("SELECT module, version, name, applied_at FROM schema_migrations ORDER BY \(order)").map {
                "\(try $0.string("module")) \(try $0.int("version")) \(try $0.string("name")) \(try $0.int("applied_at"))"
            }
        }
    }

    private func realmCount(_ database: any Database) async throws -> Int64? {
        try await database.read { try $0.queryOne("SELECT count(*) AS c FROM realm")?.int("c") }
    }

    private func tableExists(_ name: String, in database: any Database) async throws -> Bool {
        let backend: Backend = database is PostgresDatabase ? .postgres : .sqlite
        return try await database.read { try StorageTests.tableExists(name, in: $0, backend: backend) }
    }

    @Test(arguments: Backend.allCases)
    func appliesInModuleRegistrationOrderThenVersionAndRecordsEach(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        try await database.migrate([realms1, tokens1, realms2])
        #expect(try await recorded(database) == [
            "realms 1 create realm 1700000000",
            "realms 2 add realm title 1700000000",
            "tokens 1 create signing key 1700000000",
        ])
        let columns = try await database.read { try $0.query("SELECT * FROM realm").first?.columns }
        #expect(columns == ["id", "name", "title"])
        #expect(try await tableExists("signing_key", in: database))
        await database.close()
    }

    @Test("a migration for one backend runs there alone, and is recorded on both", arguments: Backend.allCases)
    func backendOnlyMigrationsRunOnTheirBackend(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        try await database.migrate([
            Migration(module: "only", version: 1, name: "postgres table", statements: ["CREATE TABLE on_postgres (a TEXT)"],
                      onlyOn: .postgres),
            Migration(module: "only", version: 2, name: "sqlite table", statements: ["CREATE TABLE on_sqlite (a TEXT)"],
                      onlyOn: .sqlite),
        ])
        #expect(try await tableExists("on_postgres", in: database) == (backend == .postgres))
        #expect(try await tableExists("on_sqlite", in: database) == (backend == .sqlite))
        #expect(try await recorded(database).count == 2)
        await database.close()
    }

    @Test(arguments: Backend.allCases)
    func migratingAgainAndAfterReopenIsANoOp(backend: Backend) async throws {
        let target = try Target(backend)
        let first = try target.open()
        try await first.migrate([realms1, realms2])
        try await first.migrate([realms1, realms2])
        let recordedFirst = try await recorded(first)
        await first.close()

        let second = try target.open(now: Date(timeIntervalSince1970: 1_800_000_000))
        try await second.migrate([realms1, realms2])
        #expect(try await recorded(second) == recordedFirst)
        #expect(try await realmCount(second) == 1)  // realms v1's INSERT ran exactly once
        await second.close()
    }

    @Test(arguments: Backend.allCases)
    func newMigrationsApplyOnTopOfRecordedOnes(backend: Backend) async throws {
        let target = try Target(backend)
        let first = try target.open()
        try await first.migrate([realms1])
        await first.close()

        let second = try target.open()
        try await second.migrate([realms1, realms2, tokens1])
        #expect(try await recorded(second).count == 3)
        #expect(try await realmCount(second) == 1)
        await second.close()
    }

    @Test(arguments: Backend.allCases)
    func recordedNameDifferentFromRegisteredIsAnError(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        try await database.migrate([realms1])
        let renamed = Migration(module: "realms", version: 1, name: "create realms table", statements: realms1.statements)
        let error = await thrownStorageError { try await database.migrate([renamed, realms2]) }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("create realm") == true)
        #expect(error?.message.contains("create realms table") == true)
        #expect(try await recorded(database).count == 1)  // realms v2 was not applied
        await database.close()
    }

    @Test("versions that do not strictly increase are rejected before anything runs", arguments: [
        [1, 1],
        [2, 1],
        [0, 1],
        [-1],
    ])
    func invalidVersionsAreRejected(versions: [Int]) async throws {
        for backend in Backend.allCases {
            try await invalidVersionsAreRejected(backend: backend, versions: versions)
        }
    }

    private func invalidVersionsAreRejected(backend: Backend, versions: [Int]) async throws {
        let target = try Target(backend)
        let database = try target.open()
        let migrations = versions.map { Migration(module: "realms", version: $0, name: "v\($0)", statements: ["CREATE TABLE t\(abs($0)) (x INTEGER)"]) }
        let error = await thrownStorageError { try await database.migrate(migrations) }
        #expect(error?.code == .migration)
        #expect(try await !tableExists("schema_migrations", in: database))
        await database.close()
    }

    @Test(arguments: Backend.allCases)
    func migrationWithoutStatementsIsRejected(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        let error = await thrownStorageError {
            try await database.migrate([Migration(module: "realms", version: 1, name: "empty", statements: [])])
        }
        #expect(error?.code == .migration)
        await database.close()
    }

    @Test(arguments: Backend.allCases)
    func failingMigrationRollsBackAndStopsLaterOnes(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        let broken = Migration(module: "realms", version: 2, name: "broken", statements: [
            "CREATE TABLE half_done (x INTEGER)",
            "INSERT INTO no_such_table VALUES (1)",
        ])
        let error = await thrownStorageError { try await database.migrate([realms1, broken, tokens1]) }
        #expect(error?.code == .migration)
        #expect(error?.sql == "INSERT INTO no_such_table VALUES (1)")
        #expect(error?.message.contains("realms v2") == true)
        #expect(try await recorded(database) == ["realms 1 create realm 1700000000"])
        #expect(try await !tableExists("half_done", in: database))
        #expect(try await !tableExists("signing_key", in: database))
        await database.close()
    }

    @Test(arguments: Backend.allCases)
    func recordedVersionUnknownToThisBuildIsAnError(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        try await database.migrate([realms1, realms2])
        let error = await thrownStorageError { try await database.migrate([realms1]) }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("realms v2") == true)
        await database.close()
    }

    @Test(arguments: Backend.allCases)
    func versionInsertedBelowAnAppliedOneIsAnError(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        let realms3 = Migration(module: "realms", version: 3, name: "add realm icon", statements: ["ALTER TABLE realm ADD COLUMN icon TEXT"])
        try await database.migrate([realms1, realms3])
        let error = await thrownStorageError { try await database.migrate([realms1, realms2, realms3]) }
        #expect(error?.code == .migration)
        #expect(try await recorded(database).count == 2)
        await database.close()
    }

    @Test(arguments: Backend.allCases)
    func otherModulesRecordsDoNotDisturbAPartialMigration(backend: Backend) async throws {
        let target = try Target(backend)
        let database = try target.open()
        try await database.migrate([realms1, tokens1])
        // A test or tool that only registers one module must not trip over the other's records.
        try await database.migrate([realms1, realms2])
        #expect(try await recorded(database).count == 3)
        await database.close()
    }
}

import Foundation
import Testing
@testable import Storage

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

    private func open(_ directory: TemporaryDirectory) throws -> SQLiteDatabase {
        try SQLiteDatabase(path: directory.path("migrate.db"), now: { Self.pinnedNow })
    }

    private func recorded(_ database: SQLiteDatabase) async throws -> [String] {
        try await database.read { executor in
            try executor.query("SELECT module, version, name, applied_at FROM schema_migrations ORDER BY rowid").map {
                "\(try $0.string("module")) \(try $0.int("version")) \(try $0.string("name")) \(try $0.int("applied_at"))"
            }
        }
    }

    private func realmCount(_ database: SQLiteDatabase) async throws -> Int64? {
        try await database.read { try $0.queryOne("SELECT count(*) AS c FROM realm")?.int("c") }
    }

    private func tableExists(_ name: String, in database: SQLiteDatabase) async throws -> Bool {
        try await database.read { try !$0.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", .text(name)).isEmpty }
    }

    @Test func appliesInModuleRegistrationOrderThenVersionAndRecordsEach() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory)
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

    @Test func migratingAgainAndAfterReopenIsANoOp() async throws {
        let directory = try TemporaryDirectory()
        let first = try open(directory)
        try await first.migrate([realms1, realms2])
        try await first.migrate([realms1, realms2])
        let recordedFirst = try await recorded(first)
        await first.close()

        let second = try SQLiteDatabase(path: directory.path("migrate.db"), now: { Date(timeIntervalSince1970: 1_800_000_000) })
        try await second.migrate([realms1, realms2])
        #expect(try await recorded(second) == recordedFirst)
        #expect(try await realmCount(second) == 1)  // realms v1's INSERT ran exactly once
        await second.close()
    }

    @Test func newMigrationsApplyOnTopOfRecordedOnes() async throws {
        let directory = try TemporaryDirectory()
        let first = try open(directory)
        try await first.migrate([realms1])
        await first.close()

        let second = try open(directory)
        try await second.migrate([realms1, realms2, tokens1])
        #expect(try await recorded(second).count == 3)
        #expect(try await realmCount(second) == 1)
        await second.close()
    }

    @Test func recordedNameDifferentFromRegisteredIsAnError() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory)
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
        let directory = try TemporaryDirectory()
        let database = try open(directory)
        let migrations = versions.map { Migration(module: "realms", version: $0, name: "v\($0)", statements: ["CREATE TABLE t\(abs($0)) (x)"]) }
        let error = await thrownStorageError { try await database.migrate(migrations) }
        #expect(error?.code == .migration)
        #expect(try await !tableExists("schema_migrations", in: database))
        await database.close()
    }

    @Test func migrationWithoutStatementsIsRejected() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory)
        let error = await thrownStorageError {
            try await database.migrate([Migration(module: "realms", version: 1, name: "empty", statements: [])])
        }
        #expect(error?.code == .migration)
        await database.close()
    }

    @Test func failingMigrationRollsBackAndStopsLaterOnes() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory)
        let broken = Migration(module: "realms", version: 2, name: "broken", statements: [
            "CREATE TABLE half_done (x)",
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

    @Test func recordedVersionUnknownToThisBuildIsAnError() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory)
        try await database.migrate([realms1, realms2])
        let error = await thrownStorageError { try await database.migrate([realms1]) }
        #expect(error?.code == .migration)
        #expect(error?.message.contains("realms v2") == true)
        await database.close()
    }

    @Test func versionInsertedBelowAnAppliedOneIsAnError() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory)
        let realms3 = Migration(module: "realms", version: 3, name: "add realm icon", statements: ["ALTER TABLE realm ADD COLUMN icon TEXT"])
        try await database.migrate([realms1, realms3])
        let error = await thrownStorageError { try await database.migrate([realms1, realms2, realms3]) }
        #expect(error?.code == .migration)
        #expect(try await recorded(database).count == 2)
        await database.close()
    }

    @Test func otherModulesRecordsDoNotDisturbAPartialMigration() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory)
        try await database.migrate([realms1, tokens1])
        // A test or tool that only registers one module must not trip over the other's records.
        try await database.migrate([realms1, realms2])
        #expect(try await recorded(database).count == 3)
        await database.close()
    }
}

import Foundation
import Testing
@testable import Storage

@Suite("Statements")
struct StatementTests {
    @Test func sameSQLRunThousandTimesUsesOneCachedStatement() throws {
        let directory = try TemporaryDirectory()
        let connection = try SQLiteConnection(path: directory.path("cache.db"), role: .writer)
        defer { connection.close() }
        try connection.execute("CREATE TABLE item (n INTEGER NOT NULL)", [])
        let cachedBefore = connection.cachedStatementCount
        for n in 0..<1000 {
            try connection.execute("INSERT INTO item (n) VALUES (?)", [.integer(Int64(n))])
        }
        #expect(connection.cachedStatementCount == cachedBefore + 1)
        let rows = try connection.query("SELECT count(*) AS c, sum(n) AS s FROM item", [])
        #expect(rows.first?["c"] == .integer(1000))
        #expect(rows.first?["s"] == .integer(499_500))
    }

    @Test(arguments: Backend.allCases)
    func sameSQLRunThousandTimesAcrossWritesSucceeds(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE item (n INTEGER NOT NULL)") }
            for n in 0..<1000 {
                try await database.write { try $0.execute("INSERT INTO item (n) VALUES (?)", .integer(Int64(n))) }
            }
            let count = try await database.read { try $0.queryOne("SELECT count(*) AS c FROM item")?.int("c") }
            #expect(count == 1000)
        }
    }

    @Test(arguments: Backend.allCases)
    func statementThatFailedIsReusable(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let insert = "INSERT INTO person (email) VALUES (?)"
            try await database.write { executor in
                try executor.execute("CREATE TABLE person (email TEXT NOT NULL UNIQUE)")
                try executor.execute(insert, "a@example.com")
                #expect(thrownCode { try executor.execute(insert, "a@example.com") } == .uniqueViolation)
                try executor.execute(insert, "b@example.com")
            }
            let count = try await database.read { try $0.queryOne("SELECT count(*) AS c FROM person")?.int("c") }
            #expect(count == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func cachedSelectSeesSchemaChanges(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let columns = try await database.write { executor in
                try executor.execute("CREATE TABLE thing (a INTEGER)")
                try executor.execute("INSERT INTO thing (a) VALUES (1)")
                let before = try executor.query("SELECT * FROM thing").first?.columns
                try executor.execute("ALTER TABLE thing ADD COLUMN b TEXT")
                let after = try executor.query("SELECT * FROM thing").first?.columns
                // Same number of columns, another name: a layout remembered for the SQL text
                // would still say "b".
                try executor.execute("ALTER TABLE thing RENAME COLUMN b TO c")
                let renamed = try executor.query("SELECT * FROM thing").first?.columns
                return (before, after, renamed)
            }
            #expect(columns.0 == ["a"])
            #expect(columns.1 == ["a", "b"])
            #expect(columns.2 == ["a", "c"])
        }
    }

    @Test(arguments: Backend.allCases)
    func sqlWithTwoStatementsIsRejected(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let error = await thrownStorageError {
                try await database.write { try $0.execute("CREATE TABLE a (x INTEGER); DROP TABLE a") }
            }
            #expect(error?.code == .unsupported)
            #expect(error?.sql == "CREATE TABLE a (x INTEGER); DROP TABLE a")
            let exists = try await database.read { try tableExists("a", in: $0, backend: backend) }
            #expect(!exists)
        }
    }

    @Test(arguments: Backend.allCases)
    func trailingSemicolonWhitespaceAndCommentAreAccepted(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let results = try await database.read { executor in
                [
                    try executor.queryOne("SELECT 1 AS one; ")?["one"],
                    try executor.queryOne("SELECT 2 AS one -- a comment")?["one"],
                    try executor.queryOne("SELECT 3 AS one;\n/* block */")?["one"],
                ]
            }
            #expect(results == [.integer(1), .integer(2), .integer(3)])
        }
    }

    @Test(arguments: Backend.allCases)
    func wrongParameterCountIsAnError(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let error = await thrownStorageError {
                _ = try await database.read { try $0.query("SELECT ? + ?", 1) }
            }
            #expect(error?.code == .other)
            #expect(error?.sql == "SELECT ? + ?")
            #expect(error?.message.contains("2 parameter") == true)
        }
    }

    @Test(arguments: Backend.allCases)
    func syntaxErrorCarriesSQLAndResultCode(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let error = await thrownStorageError {
                _ = try await database.read { try $0.query("SELEKT 1") }
            }
            #expect(error?.code == .other)
            #expect(backend == .postgres ? error?.sqlState == "42601" : error?.resultCode == 1)  // SQLITE_ERROR
            #expect(error?.sql == "SELEKT 1")
            #expect(error?.message.contains("syntax error") == true)
        }
    }

    @Test(arguments: Backend.allCases)
    func executeReturnsRowsChangedAndZeroForOtherStatements(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let counts = try await database.write { executor in
                let create = try executor.execute("CREATE TABLE n (v INTEGER)")
                let insert = try executor.execute("INSERT INTO n (v) VALUES (1), (2), (3)")
                let select = try executor.execute("SELECT * FROM n")
                let update = try executor.execute("UPDATE n SET v = v + 10 WHERE v >= ?", 2)
                let none = try executor.execute("DELETE FROM n WHERE v = ?", 99)
                return [create, insert, select, update, none]
            }
            #expect(counts == [0, 3, 0, 2, 0])
        }
    }

    @Test(arguments: Backend.allCases)
    func insertReturningGivesGeneratedColumns(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let rows = try await database.write { executor in
                try executor.execute("CREATE TABLE client (id INTEGER PRIMARY KEY, name TEXT NOT NULL, created_at INTEGER NOT NULL DEFAULT 42)")
                let first = try executor.query("INSERT INTO client (name) VALUES (?) RETURNING id, name, created_at", "web")
                let second = try executor.query("INSERT INTO client (name) VALUES (?) RETURNING id", "ios")
                return first + second
            }
            #expect(rows.count == 2)
            #expect(try rows[0].int("id") == 1)
            #expect(try rows[0].string("name") == "web")
            #expect(try rows[0].int("created_at") == 42)
            #expect(try rows[1].int("id") == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func onConflictDoUpdateUpserts(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let upsert = """
                INSERT INTO setting (key, value) VALUES (?, ?)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                RETURNING key, value
                """
            let results = try await database.write { executor in
                try executor.execute("CREATE TABLE setting (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                let inserted = try executor.queryOne(upsert, "theme", "light")
                let updated = try executor.queryOne(upsert, "theme", "dark")
                let all = try executor.query("SELECT key, value FROM setting")
                return (inserted, updated, all)
            }
            #expect(results.0?["value"] == .text("light"))
            #expect(results.1?["value"] == .text("dark"))
            #expect(results.2.count == 1)
            #expect(results.2.first?["value"] == .text("dark"))
        }
    }

    @Test(arguments: Backend.allCases)
    func onConflictDoNothingChangesNothing(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let changes = try await database.write { executor in
                try executor.execute("CREATE TABLE seen (jti TEXT PRIMARY KEY)")
                let first = try executor.execute("INSERT INTO seen (jti) VALUES (?) ON CONFLICT DO NOTHING", "abc")
                let second = try executor.execute("INSERT INTO seen (jti) VALUES (?) ON CONFLICT DO NOTHING", "abc")
                return [first, second]
            }
            #expect(changes == [1, 0])
        }
    }
}

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

    @Test func sameSQLRunThousandTimesAcrossWritesSucceeds() async throws {
        try await withDatabase { database in
            try await database.write { try $0.execute("CREATE TABLE item (n INTEGER NOT NULL)") }
            for n in 0..<1000 {
                try await database.write { try $0.execute("INSERT INTO item (n) VALUES (?)", .integer(Int64(n))) }
            }
            let count = try await database.read { try $0.queryOne("SELECT count(*) AS c FROM item")?.int("c") }
            #expect(count == 1000)
        }
    }

    @Test func statementThatFailedIsReusable() async throws {
        try await withDatabase { database in
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

    @Test func cachedSelectSeesSchemaChanges() async throws {
        try await withDatabase { database in
            let columns = try await database.write { executor in
                try executor.execute("CREATE TABLE thing (a INTEGER)")
                try executor.execute("INSERT INTO thing (a) VALUES (1)")
                let before = try executor.query("SELECT * FROM thing").first?.columns
                try executor.execute("ALTER TABLE thing ADD COLUMN b TEXT")
                let after = try executor.query("SELECT * FROM thing").first?.columns
                return (before, after)
            }
            #expect(columns.0 == ["a"])
            #expect(columns.1 == ["a", "b"])
        }
    }

    @Test func sqlWithTwoStatementsIsRejected() async throws {
        try await withDatabase { database in
            let error = await thrownStorageError {
                try await database.write { try $0.execute("CREATE TABLE a (x); DROP TABLE a") }
            }
            #expect(error?.code == .unsupported)
            #expect(error?.sql == "CREATE TABLE a (x); DROP TABLE a")
            let tables = try await database.read { try $0.query("SELECT name FROM sqlite_master WHERE name = 'a'") }
            #expect(tables.isEmpty)
        }
    }

    @Test func trailingSemicolonWhitespaceAndCommentAreAccepted() async throws {
        try await withDatabase { database in
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

    @Test func wrongParameterCountIsAnError() async throws {
        try await withDatabase { database in
            let error = await thrownStorageError {
                _ = try await database.read { try $0.query("SELECT ? + ?", 1) }
            }
            #expect(error?.code == .other)
            #expect(error?.sql == "SELECT ? + ?")
            #expect(error?.message.contains("2 parameter") == true)
        }
    }

    @Test func syntaxErrorCarriesSQLAndResultCode() async throws {
        try await withDatabase { database in
            let error = await thrownStorageError {
                _ = try await database.read { try $0.query("SELEKT 1") }
            }
            #expect(error?.code == .other)
            #expect(error?.resultCode == 1)  // SQLITE_ERROR
            #expect(error?.sql == "SELEKT 1")
            #expect(error?.message.contains("syntax error") == true)
        }
    }

    @Test func executeReturnsRowsChangedAndZeroForOtherStatements() async throws {
        try await withDatabase { database in
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

    @Test func insertReturningGivesGeneratedColumns() async throws {
        try await withDatabase { database in
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

    @Test func onConflictDoUpdateUpserts() async throws {
        try await withDatabase { database in
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

    @Test func onConflictDoNothingChangesNothing() async throws {
        try await withDatabase { database in
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

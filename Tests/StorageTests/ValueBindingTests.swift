import Foundation
import Testing
@testable import Storage

@Suite("Binding and decoding values")
struct ValueBindingTests {
    /// Stores `value` in an untyped column (no affinity conversion) and reads it back with its SQLite type.
    private func roundTrip(_ value: SQLValue, in database: SQLiteDatabase) async throws -> (value: SQLValue, type: String) {
        try await database.write { try $0.execute("CREATE TABLE IF NOT EXISTS cell (id INTEGER PRIMARY KEY, v)") }
        let id = try await database.write { executor in
            try executor.queryOne("INSERT INTO cell (v) VALUES (?) RETURNING id", value)?.int("id") ?? -1
        }
        let row = try #require(try await database.read { try $0.queryOne("SELECT v, typeof(v) AS type FROM cell WHERE id = ?", .integer(id)) })
        return (row["v"], try row.string("type"))
    }

    @Test("every value type comes back unchanged with its SQLite type", arguments: [
        (SQLValue.null, "null"),
        (.integer(0), "integer"),
        (.integer(Int64.max), "integer"),
        (.integer(Int64.min), "integer"),
        (.real(3.141592653589793), "real"),
        (.real(-1e300), "real"),
        (.text("plain"), "text"),
        (.text("héllo wörld 🌍 日本"), "text"),
        (.text("nul\u{0}inside"), "text"),
        (.blob([0, 1, 2, 254, 255]), "blob"),
    ])
    func roundTripsValue(value: SQLValue, type: String) async throws {
        try await withDatabase { database in
            let result = try await roundTrip(value, in: database)
            #expect(result.value == value)
            #expect(result.type == type)
        }
    }

    @Test func emptyTextStaysTextNotNull() async throws {
        try await withDatabase { database in
            let result = try await roundTrip(.text(""), in: database)
            #expect(result.value == .text(""))
            #expect(result.type == "text")
        }
    }

    @Test func emptyBlobStaysBlobNotNull() async throws {
        try await withDatabase { database in
            let result = try await roundTrip(.blob([]), in: database)
            #expect(result.value == .blob([]))
            #expect(result.type == "blob")
        }
    }

    @Test func largeBlobRoundTrips() async throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(4 * 1024 * 1024 + 7)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try await withDatabase { database in
            let result = try await roundTrip(.blob(bytes), in: database)
            #expect(result.value == .blob(bytes))
        }
    }

    @Test func literalsAndConveniencesBuildTheExpectedValues() {
        let literals: [SQLValue] = ["text", 42, nil, true, false, 2.5]
        #expect(literals == [.text("text"), .integer(42), .null, .integer(1), .integer(0), .real(2.5)])
        #expect(SQLValue(true) == .integer(1))
        #expect(SQLValue(false) == .integer(0))
        #expect(SQLValue(7) == .integer(7))
        #expect(SQLValue.optional(nil) == .null)
        #expect(SQLValue.optional("a") == .text("a"))
        #expect(SQLValue.optionalInteger(nil) == .null)
        #expect(SQLValue.optionalInteger(5) == .integer(5))
        #expect(SQLValue.optionalBlob(nil) == .null)
        #expect(SQLValue.optionalBlob([1]) == .blob([1]))
        #expect(SQLValue.null.isNull)
        #expect(!SQLValue.integer(0).isNull)
    }

    @Test(arguments: Backend.allCases)
    func boolParametersAreStoredAsZeroAndOne(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let row = try await database.write { executor in
                try executor.execute("CREATE TABLE flags (yes INTEGER NOT NULL, no INTEGER NOT NULL)")
                try executor.execute("INSERT INTO flags VALUES (?, ?)", true, SQLValue(false))
                return try executor.queryOne("SELECT yes, no FROM flags")
            }
            let flags = try #require(row)
            #expect(flags["yes"] == .integer(1))
            #expect(flags["no"] == .integer(0))
            #expect(try flags.bool("yes"))
            #expect(try !flags.bool("no"))
        }
    }

    @Test(arguments: Backend.allCases)
    func typedColumnsDecodeThroughTheirAccessors(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            let row = try #require(try await database.write { executor in
                try executor.execute("CREATE TABLE account (id INTEGER PRIMARY KEY, email TEXT, key BLOB, score REAL, active INTEGER, note TEXT)")
                try executor.execute("INSERT INTO account (email, key, score, active, note) VALUES (?, ?, ?, ?, ?)",
                                     "a@example.com", .blob([9, 8]), .real(0.25), true, nil)
                return try executor.queryOne("SELECT * FROM account")
            })
            #expect(row.columns == ["id", "email", "key", "score", "active", "note"])
            #expect(try row.int("id") == 1)
            #expect(try row.string("email") == "a@example.com")
            #expect(try row.bytes("key") == [9, 8])
            #expect(try row.double("score") == 0.25)
            #expect(try row.bool("active"))
            #expect(try row.optionalString("note") == nil)
            #expect(try row.optionalString("email") == "a@example.com")
            #expect(try row.optionalInt("note") == nil)
            #expect(try row.optionalBytes("note") == nil)
            #expect(try row.optionalInt("id") == 1)
        }
    }
}

@Suite("Row accessors")
struct RowTests {
    let row = Row([
        ("n", .integer(2)),
        ("t", .text("x")),
        ("b", .blob([1])),
        ("r", .real(1.5)),
        ("z", .null),
    ])

    @Test func absentColumnSubscriptsToNull() {
        #expect(row["nope"] == .null)
        #expect(row["n"] == .integer(2))
        #expect(!row.hasColumn("nope"))
        #expect(row.hasColumn("z"))
    }

    @Test func absentColumnThrowsMissingColumn() {
        #expect(thrownCode { try row.int("nope") } == .missingColumn)
        #expect(thrownCode { try row.optionalString("nope") } == .missingColumn)
    }

    @Test func wrongTypeThrowsTypeMismatchWithoutTheValue() {
        let error = #expect(throws: StorageError.self) { try row.int("t") }
        #expect(error?.code == .typeMismatch)
        #expect(error?.message == "column 't' holds text, expected integer")
        #expect(thrownCode { try row.string("n") } == .typeMismatch)
        #expect(thrownCode { try row.bytes("t") } == .typeMismatch)
        #expect(thrownCode { try row.double("t") } == .typeMismatch)
        #expect(thrownCode { try row.int("r") } == .typeMismatch)
    }

    @Test func nullInNonOptionalAccessorThrowsTypeMismatch() {
        #expect(thrownCode { try row.int("z") } == .typeMismatch)
        #expect(thrownCode { try row.string("z") } == .typeMismatch)
        #expect(thrownCode { try row.bytes("z") } == .typeMismatch)
        #expect(thrownCode { try row.bool("z") } == .typeMismatch)
    }

    @Test func boolAcceptsOnlyZeroAndOne() throws {
        #expect(thrownCode { try row.bool("n") } == .typeMismatch)
        #expect(try Row([("f", .integer(0))]).bool("f") == false)
        #expect(try Row([("f", .integer(1))]).bool("f") == true)
        #expect(try row.optionalBool("z") == nil)
    }

    @Test func doubleAcceptsIntegers() throws {
        #expect(try row.double("n") == 2)
        #expect(try row.double("r") == 1.5)
        #expect(try row.optionalDouble("z") == nil)
    }

    @Test func duplicateColumnNamesResolveToTheFirst() {
        let joined = Row([("id", .integer(1)), ("id", .integer(2))])
        #expect(joined["id"] == .integer(1))
        #expect(joined.values == [.integer(1), .integer(2)])
    }
}

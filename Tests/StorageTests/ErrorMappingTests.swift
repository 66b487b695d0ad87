import Foundation
import Testing
@testable import Storage

@Suite("Error mapping")
struct ErrorMappingTests {
    @Test(arguments: Backend.allCases)
    func uniqueViolationIsMapped(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE person (id INTEGER PRIMARY KEY, email TEXT NOT NULL UNIQUE)")
                try executor.execute("INSERT INTO person (id, email) VALUES (1, 'a@example.com')")
            }
            let unique = await thrownStorageError {
                try await database.write { try $0.execute("INSERT INTO person (id, email) VALUES (2, 'a@example.com')") }
            }
            #expect(unique?.code == .uniqueViolation)
            #expect(backend == .postgres ? unique?.sqlState == "23505" : unique?.resultCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
        }
    }

    @Test(arguments: Backend.allCases)
    func primaryKeyViolationIsMappedToUnique(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE pair (a TEXT, b TEXT, PRIMARY KEY (a, b))")
                try executor.execute("INSERT INTO pair VALUES ('x', 'y')")
            }
            let error = await thrownStorageError {
                try await database.write { try $0.execute("INSERT INTO pair VALUES ('x', 'y')") }
            }
            #expect(error?.code == .uniqueViolation)
            #expect(backend == .postgres ? error?.sqlState == "23505" : error?.resultCode == 1555)  // SQLITE_CONSTRAINT_PRIMARYKEY
        }
    }

    @Test(arguments: Backend.allCases)
    func foreignKeysAreEnforced(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE realm (id INTEGER PRIMARY KEY)")
                try executor.execute("CREATE TABLE client (id INTEGER PRIMARY KEY, realm_id INTEGER NOT NULL REFERENCES realm (id))")
                try executor.execute("INSERT INTO realm (id) VALUES (1)")
                try executor.execute("INSERT INTO client (realm_id) VALUES (1)")
            }
            let insert = await thrownStorageError {
                try await database.write { try $0.execute("INSERT INTO client (realm_id) VALUES (?)", 99) }
            }
            #expect(insert?.code == .foreignKeyViolation)
            #expect(backend == .postgres ? insert?.sqlState == "23503" : insert?.resultCode == 787)  // SQLITE_CONSTRAINT_FOREIGNKEY
            let delete = await thrownStorageError {
                try await database.write { try $0.execute("DELETE FROM realm WHERE id = 1") }
            }
            #expect(delete?.code == .foreignKeyViolation)
        }
    }

    @Test(arguments: Backend.allCases)
    func otherConstraintsAreMappedToConstraint(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE item (name TEXT NOT NULL CHECK (length(name) > 1))") }
            let notNull = await thrownStorageError {
                try await database.write { try $0.execute("INSERT INTO item (name) VALUES (?)", nil) }
            }
            #expect(notNull?.code == .constraint)
            let check = await thrownStorageError {
                try await database.write { try $0.execute("INSERT INTO item (name) VALUES (?)", "x") }
            }
            #expect(check?.code == .constraint)
        }
    }

    @Test(arguments: Backend.allCases)
    func strictTableTypeErrorIsATypeMismatch(backend: Backend) async throws {
        try await withDatabase(backend) { database in
            try await database.write { try $0.execute("CREATE TABLE counter (n INTEGER NOT NULL) STRICT") }
            let error = await thrownStorageError {
                try await database.write { try $0.execute("INSERT INTO counter (n) VALUES (?)", "not a number") }
            }
            #expect(error?.code == .typeMismatch)
        }
    }

    @Test(arguments: Backend.allCases)
    func errorsCarrySQLAndCodeButNeverParameterValues(backend: Backend) async throws {
        let secret = "refresh-token-hash-5f2b9c1e77d04a"
        let secretBytes: [UInt8] = Array("super-secret-key-material".utf8)
        let insert = "INSERT INTO token (hash, sealed) VALUES (?, ?)"
        try await withDatabase(backend) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE token (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, sealed BLOB NOT NULL)")
                try executor.execute(insert, .text(secret), .blob(secretBytes))
            }
            let error = try #require(await thrownStorageError {
                try await database.write { try $0.execute(insert, .text(secret), .blob(secretBytes)) }
            })
            #expect(error.code == .uniqueViolation)
            #expect(backend == .postgres ? error.sqlState == "23505" : error.resultCode == 2067)
            #expect(error.sql == insert)
            let everything = [error.description, error.message, error.sql ?? "", String(reflecting: error)]
            for text in everything {
                #expect(!text.contains(secret))
                #expect(!text.contains("super-secret"))
            }
            #expect(error.description.contains(insert))
            #expect(error.description.contains(backend == .postgres ? "23505" : "2067"))
        }
    }

    @Test func resultCodesMapToBackendNeutralCodes() {
        #expect(StorageError.code(forSQLite: 5) == .busy)         // SQLITE_BUSY
        #expect(StorageError.code(forSQLite: 517) == .busy)       // SQLITE_BUSY_SNAPSHOT
        #expect(StorageError.code(forSQLite: 6) == .busy)         // SQLITE_LOCKED
        #expect(StorageError.code(forSQLite: 11) == .corrupt)     // SQLITE_CORRUPT
        #expect(StorageError.code(forSQLite: 26) == .corrupt)     // SQLITE_NOTADB
        #expect(StorageError.code(forSQLite: 10) == .io)          // SQLITE_IOERR
        #expect(StorageError.code(forSQLite: 266) == .io)         // SQLITE_IOERR_READ
        #expect(StorageError.code(forSQLite: 14) == .io)          // SQLITE_CANTOPEN
        #expect(StorageError.code(forSQLite: 20) == .typeMismatch)  // SQLITE_MISMATCH
        #expect(StorageError.code(forSQLite: 1299) == .constraint)  // SQLITE_CONSTRAINT_NOTNULL
        #expect(StorageError.code(forSQLite: 1) == .other)        // SQLITE_ERROR
    }
}

import Testing
@testable import Storage

@Suite("Database location parsing")
struct DatabaseLocationTests {
    @Test("sqlite locations keep the path as given", arguments: [
        ("sqlite:./data/herald.db", "./data/herald.db"),
        ("sqlite:/abs/path.db", "/abs/path.db"),
        ("sqlite:relative.db", "relative.db"),
        ("sqlite:///abs/path.db", "/abs/path.db"),
        ("  sqlite:./spaced.db \n", "./spaced.db"),
        ("SQLITE:upper.db", "upper.db"),
    ])
    func parsesSQLite(text: String, path: String) throws {
        #expect(try DatabaseLocation(parsing: text) == .sqlite(path: path))
    }

    @Test("postgres URLs are kept verbatim", arguments: [
        "postgres://herald:pw@db.internal:5432/herald",
        "postgresql://db/herald?sslmode=require",
        "postgres://localhost",
        "postgres://herald@/herald?host=/var/run/postgresql",  // the Unix socket (README)
    ])
    func parsesPostgres(url: String) throws {
        #expect(try DatabaseLocation(parsing: url) == .postgres(url: url))
    }

    @Test("unsupported locations are rejected without echoing secrets", arguments: [
        "mysql://admin:hunter2@db/herald",
        "admin:hunter2@db/herald",
        "hunter2",
        "",
        "https://user:hunter2@example.com",
        "postgres:/admin:hunter2@db",
    ])
    func rejectsUnsupported(text: String) {
        let error = #expect(throws: StorageError.self) { try DatabaseLocation(parsing: text) }
        #expect(error?.code == .unsupported)
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.message.contains("admin") == false)
        #expect(error?.description.contains("hunter2") == false)
        #expect(error?.sql == nil)
    }

    @Test func rejectedSchemeIsNamed() {
        let error = #expect(throws: StorageError.self) { try DatabaseLocation(parsing: "mysql://admin:hunter2@db/herald") }
        #expect(error?.message.contains("'mysql'") == true)
    }

    @Test("sqlite locations without a usable file path are rejected", arguments: [
        "sqlite:",
        "sqlite::memory:",
        "sqlite:file:herald.db?mode=memory",
    ])
    func rejectsSQLiteWithoutPath(text: String) {
        let error = #expect(throws: StorageError.self) { try DatabaseLocation(parsing: text) }
        #expect(error?.code == .unsupported)
    }

    @Test func postgresWithNothingAfterTheSchemeIsRejected() {
        let error = #expect(throws: StorageError.self) { try DatabaseLocation(parsing: "postgres://") }
        #expect(error?.code == .unsupported)
    }

    @Test func descriptionMasksPasswords() {
        let url = DatabaseLocation.postgres(url: "postgres://herald:hunter2@db:5432/herald?sslmode=require&password=hunter3")
        #expect(url.description == "postgres://herald:***@db:5432/herald?sslmode=require&password=***")
        #expect(DatabaseLocation.postgres(url: "postgresql://herald@db/herald").description == "postgresql://herald@db/herald")
        #expect(DatabaseLocation.sqlite(path: "./data/herald.db").description == "sqlite:./data/herald.db")
    }
}

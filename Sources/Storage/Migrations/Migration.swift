/// One forward-only schema change owned by a module, e.g. `Migration(module: "realms",
/// version: 1, name: "create realms", statements: ["CREATE TABLE realms (…)"])`.
///
/// Once a migration has shipped, never edit it: add a new version. The name is recorded and
/// checked on every start, so a renamed or renumbered migration is detected.
public struct Migration: Sendable, Equatable {
    /// The module that owns the tables this migration touches.
    public let module: String
    /// Position within the module; strictly increasing, starting at 1 or above.
    public let version: Int
    /// A short description, recorded alongside the version.
    public let name: String
    /// Statements run in order inside one transaction; one statement per string.
    public let statements: [String]
    /// True when the statements are for PostgreSQL alone (say, dropping a constraint, which
    /// SQLite's ALTER TABLE cannot): on SQLite the version is recorded and nothing runs.
    public let postgresOnly: Bool
    /// True when the statements are for SQLite alone (say, rebuilding a table as `WITHOUT
    /// ROWID`, which means nothing to PostgreSQL): on PostgreSQL the version is recorded and
    /// nothing runs.
    public let sqliteOnly: Bool

    /// Creates a migration.
    public init(module: String, version: Int, name: String, statements: [String], postgresOnly: Bool = false,
                sqliteOnly: Bool = false) {
        precondition(!(postgresOnly && sqliteOnly), "a migration runs on at least one backend")
        self.module = module
        self.version = version
        self.name = name
        self.statements = statements
        self.postgresOnly = postgresOnly
        self.sqliteOnly = sqliteOnly
    }
}

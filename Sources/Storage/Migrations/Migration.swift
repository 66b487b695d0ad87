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
    /// The one backend the statements are for, or nil (both): say, dropping a constraint, which
    /// SQLite's ALTER TABLE cannot (`.postgres`), or rebuilding a table as `WITHOUT ROWID`,
    /// which means nothing to PostgreSQL (`.sqlite`). On the other backend the version is
    /// recorded and nothing runs.
    public let onlyOn: Backend?

    /// A database engine a migration may be limited to.
    public enum Backend: Sendable, Equatable {
        case sqlite, postgres
    }

    /// Creates a migration.
    public init(module: String, version: Int, name: String, statements: [String], onlyOn: Backend? = nil) {
        self.module = module
        self.version = version
        self.name = name
        self.statements = statements
        self.onlyOn = onlyOn
    }
}

/// The validated, ordered list of migrations, and how to apply one on any `SQLExecutor`.
///
/// Backend-neutral: the SQLite and PostgreSQL databases both run each step inside their own
/// write transaction (PostgreSQL also takes an advisory lock), so a concurrent migrator in
/// another process is harmless.
struct MigrationPlan: Sendable {
    /// Migrations in (module registration order, version) order.
    let steps: [Migration]

    static let createTableSQL = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            module TEXT NOT NULL,
            version INTEGER NOT NULL,
            name TEXT NOT NULL,
            applied_at INTEGER NOT NULL,
            PRIMARY KEY (module, version)
        )
        """

    /// Validates and orders `migrations`: a module's registration order is the position of its
    /// first migration; within a module versions must be positive and strictly increasing.
    init(_ migrations: [Migration]) throws(StorageError) {
        var moduleOrder: [String] = []
        var byModule: [String: [Migration]] = [:]
        for migration in migrations {
            guard !migration.module.isEmpty else {
                throw StorageError(code: .migration, message: "a migration has an empty module name")
            }
            guard migration.version > 0 else {
                throw StorageError(code: .migration, message: "migration \(migration.module) v\(migration.version): versions start at 1")
            }
            guard !migration.statements.isEmpty else {
                throw StorageError(code: .migration, message: "migration \(migration.module) v\(migration.version) has no statements")
            }
            if let previous = byModule[migration.module]?.last {
                guard migration.version > previous.version else {
                    throw StorageError(code: .migration, message: "migration \(migration.module) v\(migration.version) is registered after v\(previous.version): versions must be strictly increasing")
                }
            } else {
                moduleOrder.append(migration.module)
            }
            byModule[migration.module, default: []].append(migration)
        }
        steps = moduleOrder.flatMap { byModule[$0] ?? [] }
    }

    /// Modules in this plan, in registration order.
    var modules: [String] {
        var seen: Set<String> = []
        return steps.map(\.module).filter { seen.insert($0).inserted }
    }

    /// Fails if the database recorded a version of a planned module that this build does not
    /// register: the database was migrated by a newer (or different) build.
    func checkNoUnknownVersions(in executor: any SQLExecutor) throws(StorageError) {
        let registered = Set(steps.map { "\($0.module)\u{0}\($0.version)" })
        for module in modules {
            for row in try executor.query("SELECT version FROM schema_migrations WHERE module = ? ORDER BY version", .text(module)) {
                let version = try row.int("version")
                if !registered.contains("\(module)\u{0}\(version)") {
                    throw StorageError(code: .migration, message: "the database has migration \(module) v\(version), which this build does not know (was it migrated by a newer build?)")
                }
            }
        }
    }

    /// Applies `migration` unless already recorded; returns true when it ran.
    /// Call inside a write transaction.
    @discardableResult
    static func apply(_ migration: Migration, on executor: any SQLExecutor, appliedAt: Int64) throws(StorageError) -> Bool {
        let recorded = try executor.queryOne(
            "SELECT name FROM schema_migrations WHERE module = ? AND version = ?",
            .text(migration.module), .integer(Int64(migration.version)))
        if let recorded {
            let recordedName = try recorded.string("name")
            guard recordedName == migration.name else {
                throw StorageError(code: .migration, message: "migration \(migration.module) v\(migration.version) is recorded as '\(recordedName)' but registered as '\(migration.name)'")
            }
            return false
        }
        // Forward-only: a version slotted in below one already applied would run out of order.
        if let latest = try executor.queryOne("SELECT MAX(version) AS latest FROM schema_migrations WHERE module = ?", .text(migration.module)),
           let latestVersion = try latest.optionalInt("latest"), latestVersion > migration.version {
            throw StorageError(code: .migration, message: "migration \(migration.module) v\(migration.version) is not applied but v\(latestVersion) is: new migrations must have higher versions")
        }
        let backend: Migration.Backend = executor is PostgresExecutor ? .postgres : .sqlite
        let skipped = migration.onlyOn.map { $0 != backend } ?? false
        for statement in migration.statements where !skipped {
            do {
                try executor.execute(statement, [])
            } catch {
                // Keep the backend's code and SQL, but say which migration failed.
                throw StorageError(code: .migration, resultCode: error.resultCode, sqlState: error.sqlState, sql: error.sql,
                                   message: "migration \(migration.module) v\(migration.version) '\(migration.name)' failed: \(error.message)")
            }
        }
        try executor.execute(
            "INSERT INTO schema_migrations (module, version, name, applied_at) VALUES (?, ?, ?, ?)",
            .text(migration.module), .integer(Int64(migration.version)), .text(migration.name), .integer(appliedAt))
        return true
    }
}

/// What a transaction body talks to. Not Sendable: used only inside read/write closures,
/// on the thread that owns the connection.
///
/// SQL uses `?` placeholders, `RETURNING` and `ON CONFLICT … DO UPDATE/NOTHING`, which both
/// SQLite and PostgreSQL understand.
public protocol SQLExecutor {
    /// Runs one statement to completion and returns the number of rows it changed.
    @discardableResult func execute(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int
    /// Runs one statement and returns all its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [Row]
    /// Runs `body` under a savepoint (see the extension's default). Both stores' executors
    /// override it: their optimistic attempt runs `body` without one and, should `body` throw,
    /// replays the whole transaction with real savepoints.
    func withSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T
    /// Runs a data-changing statement whose result the body does not need, at the latest
    /// when the transaction commits. PostgreSQL sends it with the body's next statement, or
    /// with COMMIT, in one round trip; should it fail, the transaction fails (nothing is
    /// committed) with its error, at that point rather than here. SQLite runs it at once.
    func executeDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError)
    /// Runs `statements` in order and returns each one's rows (a data-changing one's RETURNING
    /// rows). PostgreSQL sends them, with what is deferred, in one round trip; SQLite runs them
    /// one by one. For a body whose next statements do not depend on each other's answers.
    func queryBatch(_ statements: [(sql: String, parameters: [SQLValue])]) throws(StorageError) -> [[Row]]
    /// Runs a read whose rows the body does not need before it returns (an answer's profile):
    /// PostgreSQL sends it after what is deferred before it, with the body's next statement or
    /// with COMMIT, in one round trip, so it sees the transaction's own writes; SQLite runs it at
    /// once. The rows are there once the transaction has run it: read them after the write returns.
    func queryDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> DeferredRows
}

extension SQLExecutor {
    /// Runs one statement to completion and returns the number of rows it changed.
    @discardableResult public func execute(_ sql: String, _ parameters: SQLValue...) throws(StorageError) -> Int {
        try execute(sql, parameters)
    }

    /// Runs one statement and returns all its rows.
    public func query(_ sql: String, _ parameters: SQLValue...) throws(StorageError) -> [Row] {
        try query(sql, parameters)
    }

    /// See the requirement; by default the statement runs at once.
    public func executeDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) {
        try execute(sql, parameters)
    }

    /// See the requirement; by default the statements run one by one.
    public func queryBatch(_ statements: [(sql: String, parameters: [SQLValue])]) throws(StorageError) -> [[Row]] {
        var rows: [[Row]] = []
        for statement in statements { rows.append(try query(statement.sql, statement.parameters)) }
        return rows
    }

    /// See the requirement; by default the read runs at once.
    public func queryDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> DeferredRows {
        DeferredRows(try query(sql, parameters))
    }

    /// See the requirement.
    public func executeDeferred(_ sql: String, _ parameters: SQLValue...) throws(StorageError) {
        try executeDeferred(sql, parameters)
    }

    /// Runs one statement and returns its first row, or nil when it returns none.
    public func queryOne(_ sql: String, _ parameters: SQLValue...) throws(StorageError) -> Row? {
        try query(sql, parameters).first
    }

    /// Runs one statement and returns its first row, or nil when it returns none.
    public func queryOne(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Row? {
        try query(sql, parameters).first
    }
}

extension SQLExecutor {
    /// Runs `body` under a savepoint of the caller's write transaction: when `body` throws,
    /// its own changes are undone (`ROLLBACK TO`) and the error is rethrown, so the caller can
    /// still commit what it wrote before (say, a claim that must stick even when the rest is
    /// refused). `name` (letters, digits, `_`) is prefixed with `herald_`, so it can never be a
    /// reserved word on either backend. Should the undo itself fail, that error
    /// is thrown instead, so a half-undone body can never be committed. SQLite and PostgreSQL
    /// both support savepoints, nested too; on PostgreSQL the undo also revives a transaction
    /// that a failed statement aborted, which is why a `StorageError` should still be rethrown
    /// out of the transaction (a serialization failure must reach the retry).
    public func withSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        try withRealSavepoint(name, body)
    }

    /// What `withSavepoint` does by default, for an executor that decides when to use it.
    func withRealSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        let name = "herald_" + name
        try execute("SAVEPOINT \(name)", [])
        let result: T
        do {
            result = try body()
        } catch {
            try execute("ROLLBACK TO SAVEPOINT \(name)", [])
            try execute("RELEASE SAVEPOINT \(name)", [])
            throw error
        }
        try execute("RELEASE SAVEPOINT \(name)", [])
        return result
    }
}

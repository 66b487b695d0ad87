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

    /// Runs one statement and returns its first row, or nil when it returns none.
    public func queryOne(_ sql: String, _ parameters: SQLValue...) throws(StorageError) -> Row? {
        try query(sql, parameters).first
    }

    /// Runs one statement and returns its first row, or nil when it returns none.
    public func queryOne(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Row? {
        try query(sql, parameters).first
    }
}

/// An error raised by Storage.
///
/// Carries the backend's (extended) result code and the SQL text that failed, never the bound
/// parameter values: those may be secrets (token hashes, encrypted keys, emails).
public struct StorageError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is, independent of the backend.
    public enum Code: Sendable, Hashable {
        /// A UNIQUE or PRIMARY KEY constraint rejected the change.
        case uniqueViolation
        /// A FOREIGN KEY constraint rejected the change.
        case foreignKeyViolation
        /// Another constraint (CHECK, NOT NULL, …) rejected the change.
        case constraint
        /// The database stayed locked by another connection or process past the busy timeout.
        case busy
        /// A value had the wrong type (a column read as the wrong type, or a STRICT table mismatch).
        case typeMismatch
        /// A row has no column of the requested name.
        case missingColumn
        /// The database file could not be opened, read or written.
        case io
        /// The database server cannot be reached right now: connection refused or lost, server
        /// shutting down or starting, too many connections. Nothing was committed by the failed
        /// call; the same call may succeed once the server is back (callers answer 503).
        case unavailable
        /// The file is not a database, or it is damaged.
        case corrupt
        /// The request is not supported (location scheme, SQL shape, backend).
        case unsupported
        /// A migration is invalid or does not match what the database recorded.
        case migration
        /// Anything else (misuse, a closed database, a syntax error, …).
        case other
    }

    /// The kind of failure.
    public let code: Code

    /// Whether the failure is a passing condition of the database rather than of the request
    /// or of the code: the server is unreachable, or it stayed busy past every retry. The
    /// operation may be retried later; an HTTP caller answers 503 with `Retry-After`.
    public var isTemporary: Bool { code == .unavailable || code == .busy }
    /// The backend's (extended) result code; 0 when the error did not come from the backend.
    /// PostgreSQL: the SQLSTATE packed as PostgreSQL's own `MAKE_SQLSTATE` does (see `sqlState`).
    public let resultCode: Int32
    /// PostgreSQL's five-character SQLSTATE (e.g. "23505"); nil for SQLite and non-backend errors.
    public let sqlState: String?
    /// The SQL statement that failed, if any. Never contains parameter values.
    public let sql: String?
    /// A human-readable explanation. Never contains parameter values.
    public let message: String

    /// Creates an error; `message` and `sql` must not contain secrets.
    public init(code: Code, resultCode: Int32 = 0, sqlState: String? = nil, sql: String? = nil, message: String) {
        self.code = code
        self.resultCode = resultCode
        self.sqlState = sqlState
        self.sql = sql
        self.message = message
    }

    /// Why, in one short line for a log: the SQLSTATE when the server gave one, and the
    /// backend's message (libpq's or SQLite's, which never hold parameter values or the
    /// connection URL's password), at most 200 characters.
    public var cause: String {
        let text = (sqlState.map { "SQLSTATE \($0): " } ?? "") + message
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    public var description: String {
        var text = "StorageError(\(code)"
        if let sqlState {
            text += ", SQLSTATE \(sqlState)"
        } else if resultCode != 0 {
            text += ", result code \(resultCode)"
        }
        text += "): \(message)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }
}

extension StorageError {
    /// Raised when a connection is used after `close()`.
    static func closed(sql: String? = nil) -> StorageError {
        StorageError(code: .other, sql: sql, message: "the database is closed")
    }
}

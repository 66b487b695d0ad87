import CSQLite

/// Extended result codes are macro expressions (`SQLITE_CONSTRAINT | (8<<8)`), which Swift does
/// not import; these are their values from sqlite3.h.
enum SQLiteResultCode {
    static let constraintForeignKey: Int32 = 787     // SQLITE_CONSTRAINT_FOREIGNKEY
    static let constraintPrimaryKey: Int32 = 1555    // SQLITE_CONSTRAINT_PRIMARYKEY
    static let constraintUnique: Int32 = 2067        // SQLITE_CONSTRAINT_UNIQUE
    static let constraintRowID: Int32 = 2579         // SQLITE_CONSTRAINT_ROWID
    static let constraintDataType: Int32 = 3091      // SQLITE_CONSTRAINT_DATATYPE (STRICT tables)
}

extension StorageError {
    /// Maps an SQLite (extended) result code to a backend-neutral error.
    init(sqliteCode: Int32, message: String, sql: String?) {
        self.init(code: Self.code(forSQLite: sqliteCode), resultCode: sqliteCode, sql: sql, message: message)
    }

    /// The error the connection `handle` reports for `resultCode`; `sqlite3_errmsg` names
    /// tables, columns and SQL fragments, never bound values.
    init(sqliteCode: Int32, connection handle: OpaquePointer?, sql: String?) {
        let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(sqliteCode))
        self.init(sqliteCode: sqliteCode, message: message, sql: sql)
    }

    static func code(forSQLite resultCode: Int32) -> Code {
        switch resultCode {
        case SQLiteResultCode.constraintUnique, SQLiteResultCode.constraintPrimaryKey, SQLiteResultCode.constraintRowID:
            return .uniqueViolation
        case SQLiteResultCode.constraintForeignKey:
            return .foreignKeyViolation
        case SQLiteResultCode.constraintDataType:
            return .typeMismatch
        default:
            break
        }
        switch resultCode & 0xFF {
        case SQLITE_CONSTRAINT: return .constraint
        case SQLITE_BUSY, SQLITE_LOCKED: return .busy
        case SQLITE_MISMATCH: return .typeMismatch
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_FULL, SQLITE_PERM, SQLITE_READONLY, SQLITE_NOLFS: return .io
        case SQLITE_CORRUPT, SQLITE_NOTADB: return .corrupt
        default: return .other
        }
    }
}

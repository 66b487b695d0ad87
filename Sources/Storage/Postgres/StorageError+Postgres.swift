extension StorageError {
    /// An error from a PostgreSQL result carrying `sqlState`. `primaryMessage` is PostgreSQL's
    /// primary message only: the DETAIL line (which quotes key values) is never used, and for
    /// data exceptions (class 22, whose message quotes the rejected input) it is replaced.
    init(sqlState: String, primaryMessage: String, sql: String?) {
        let code = Self.code(forSQLState: sqlState)
        let message = sqlState.hasPrefix("22")
            ? "a value does not fit its column type or range (SQLSTATE \(sqlState))"
            : primaryMessage
        self.init(code: code, resultCode: Self.packed(sqlState), sqlState: sqlState, sql: sql, message: message)
    }

    /// The backend-neutral code of a PostgreSQL SQLSTATE, matching what SQLite reports for the same failure.
    static func code(forSQLState state: String) -> Code {
        switch state {
        case "23505": return .uniqueViolation
        case "23503": return .foreignKeyViolation
        case "40001", "40P01", "55P03": return .busy           // serialization failure, deadlock, lock not available
        case "42703": return .missingColumn
        case "42804": return .typeMismatch
        case "25006": return .io                              // read-only transaction (SQLite: SQLITE_READONLY)
        case "57P01", "57P02", "57P03": return .unavailable    // admin/crash shutdown, cannot connect now
        case "53300": return .unavailable                     // too many connections
        case "XX001", "XX002": return .corrupt                 // data / index corrupted
        default: break
        }
        switch state.prefix(2) {
        case "23": return .constraint
        case "22": return .typeMismatch
        case "08": return .unavailable                        // connection exception
        case "53", "58": return .io                           // insufficient resources (disk full, memory), system error
        case "0A": return .unsupported
        default: return .other
        }
    }

    /// SQLSTATE packed as PostgreSQL's `MAKE_SQLSTATE` (6 bits per character), so it fits `resultCode`.
    static func packed(_ state: String) -> Int32 {
        var value: Int32 = 0
        for (offset, byte) in state.utf8.prefix(5).enumerated() {
            value |= ((Int32(byte) - 48) & 0x3F) << (6 * Int32(offset))
        }
        return value
    }

    /// A lost or refused connection.
    static func connectionLost(_ reason: String, sql: String?) -> StorageError {
        StorageError(code: .unavailable, resultCode: packed("08006"), sqlState: "08006", sql: sql,
                     message: "the PostgreSQL connection failed: \(reason)")
    }
}

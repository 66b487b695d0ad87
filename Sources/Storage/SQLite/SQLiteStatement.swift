import CSQLite

/// A prepared statement; owns its `sqlite3_stmt` and finalizes it in `deinit`.
///
/// Lives in its connection's statement cache and is used only on that connection's thread.
/// After each use it is reset and its bindings cleared, so the next use starts clean and no
/// bound value (possibly a secret) lingers in memory longer than needed.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private let connection: OpaquePointer
    private let parameterCount: Int

    /// Prepares exactly one statement; SQL with a second statement after the first is rejected
    /// rather than silently ignored.
    init(sql: String, connection: OpaquePointer) throws(StorageError) {
        var statement: OpaquePointer?
        var trailingStatement: OpaquePointer?
        var rc: Int32 = SQLITE_OK
        var trailingRC: Int32 = SQLITE_OK
        sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            rc = sqlite3_prepare_v3(connection, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, &tail)
            if rc == SQLITE_OK, let tail, tail.pointee != 0 {
                // Preparing the rest tells whitespace/comments (no statement) from real SQL.
                trailingRC = sqlite3_prepare_v2(connection, tail, -1, &trailingStatement, nil)
            }
        }
        guard rc == SQLITE_OK else {
            sqlite3_finalize(statement)
            throw StorageError(sqliteCode: rc, connection: connection, sql: sql)
        }
        guard let statement else {
            throw StorageError(code: .unsupported, sql: sql, message: "the SQL contains no statement")
        }
        guard trailingRC == SQLITE_OK, trailingStatement == nil else {
            sqlite3_finalize(trailingStatement)
            sqlite3_finalize(statement)
            throw StorageError(code: .unsupported, sql: sql, message: "the SQL contains more than one statement; run them one at a time")
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
        self.parameterCount = Int(sqlite3_bind_parameter_count(statement))
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds, steps to completion and returns the number of rows changed.
    func execute(_ parameters: [SQLValue]) throws(StorageError) -> Int {
        defer { clear() }
        try bind(parameters)
        let totalBefore = sqlite3_total_changes64(connection)
        while true {
            let rc = sqlite3_step(handle)
            if rc == SQLITE_DONE { break }
            if rc != SQLITE_ROW { throw failure(rc) }
        }
        // sqlite3_changes64 keeps the count of the last INSERT/UPDATE/DELETE, so a SELECT or
        // DDL statement would report a stale number: only trust it when something changed.
        return sqlite3_total_changes64(connection) == totalBefore ? 0 : Int(sqlite3_changes64(connection))
    }

    /// Binds, steps to completion and returns every row.
    func query(_ parameters: [SQLValue]) throws(StorageError) -> [Row] {
        defer { clear() }
        try bind(parameters)
        var rows: [Row] = []
        while true {
            let rc = sqlite3_step(handle)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw failure(rc) }
            let rowLayout = currentLayout()
            let columnCount = Int32(rowLayout.names.count)
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                values.append(value(at: column))
            }
            rows.append(Row(layout: rowLayout, values: values))
        }
        return rows
    }

    /// The column names of this statement's results, built once and kept while the statement
    /// lives: naming a row's columns (a string and a dictionary entry per column) cost as much
    /// as the lookup itself on the login's hot queries.
    private var layout: (layout: RowLayout, preparedCount: Int32)?

    /// The cached layout, or a new one when SQLite re-prepared the statement since (a schema
    /// change — e.g. ALTER TABLE before a cached `SELECT *` — re-prepares inside
    /// sqlite3_step, so this is read after the first step, never before).
    private func currentLayout() -> RowLayout {
        let preparedCount = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        if let layout, layout.preparedCount == preparedCount { return layout.layout }
        let rowLayout = RowLayout((0..<sqlite3_column_count(handle)).map { column in
            sqlite3_column_name(handle, column).map { String(cString: $0) } ?? ""
        })
        layout = (rowLayout, preparedCount)
        return rowLayout
    }

    private func bind(_ parameters: [SQLValue]) throws(StorageError) {
        guard parameters.count == parameterCount else {
            throw StorageError(code: .other, resultCode: SQLITE_RANGE, sql: sql,
                               message: "the statement has \(parameterCount) parameter(s) but \(parameters.count) value(s) were given")
        }
        for (offset, value) in parameters.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(handle, index)
            case .integer(let integer):
                rc = sqlite3_bind_int64(handle, index, integer)
            case .real(let real):
                rc = sqlite3_bind_double(handle, index, real)
            case .text(var text):
                rc = text.withUTF8 { utf8 in
                    // A nil base address would bind NULL, not the empty string.
                    guard let base = utf8.baseAddress, utf8.count > 0 else {
                        return sqlite3_bind_text(handle, index, "", 0, herald_sqlite_transient())
                    }
                    return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                        sqlite3_bind_text64(handle, index, $0, sqlite3_uint64(utf8.count), herald_sqlite_transient(), UInt8(SQLITE_UTF8))
                    }
                }
            case .blob(let bytes):
                if bytes.isEmpty {
                    // A nil pointer would bind NULL; a zero-length zeroblob is an empty BLOB.
                    rc = sqlite3_bind_zeroblob(handle, index, 0)
                } else {
                    rc = bytes.withUnsafeBytes {
                        sqlite3_bind_blob64(handle, index, $0.baseAddress, sqlite3_uint64($0.count), herald_sqlite_transient())
                    }
                }
            }
            guard rc == SQLITE_OK else { throw failure(rc) }
        }
    }

    private func value(at column: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            // Pointer first, then byte count, as the SQLite docs require.
            guard let text = sqlite3_column_text(handle, column) else { return .text("") }
            let count = Int(sqlite3_column_bytes(handle, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            // A zero-length BLOB has a nil pointer but is still a BLOB, not NULL.
            guard let blob = sqlite3_column_blob(handle, column) else { return .blob([]) }
            let count = Int(sqlite3_column_bytes(handle, column))
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: count)))
        default:
            return .null
        }
    }

    private func failure(_ rc: Int32) -> StorageError {
        StorageError(sqliteCode: rc, connection: connection, sql: sql)
    }

    /// Makes the statement reusable and drops the bound values.
    private func clear() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}

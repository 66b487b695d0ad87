import CPostgres
import Foundation

/// One libpq connection (`PGconn*`), its prepared-statement cache and its reconnect logic.
///
/// Not thread-safe: used by one thread at a time, which `PostgresPool` guarantees by running
/// every use on the connection's own serial queue. Owns the handle; `close()` (or `deinit`)
/// finishes it. A connection that broke (server restart, network) is re-opened at the start of
/// its next transaction, so a restarted database recovers without restarting Herald.
final class PostgresConnection {
    /// How a transaction starts.
    enum TransactionKind {
        /// READ COMMITTED: each statement sees what committed before it (used by migrations,
        /// which serialize on an advisory lock instead).
        case readCommitted
        /// SERIALIZABLE: behaves as if transactions ran one after another, as on SQLite's single
        /// writer; may fail with 40001, after which the whole body is retried.
        case serializable
        /// REPEATABLE READ, READ ONLY: one snapshot for the whole body, like a SQLite WAL read.
        case readOnlySnapshot

        var beginSQL: String {
            switch self {
            case .readCommitted: "BEGIN ISOLATION LEVEL READ COMMITTED"
            case .serializable: "BEGIN ISOLATION LEVEL SERIALIZABLE"
            case .readOnlySnapshot: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
            }
        }
    }

    /// Seconds libpq waits for a connection unless the URL sets `connect_timeout` itself.
    static let defaultConnectTimeoutSeconds = 2
    /// Bounds the cache against SQL built dynamically (e.g. `IN (?, ?, …)` of varying length).
    static let statementCacheLimit = 256

    private static let int8OID: UInt32 = 20, float8OID: UInt32 = 701, textOID: UInt32 = 25, byteaOID: UInt32 = 17
    private static let boolOID: UInt32 = 16, int2OID: UInt32 = 21, int4OID: UInt32 = 23, oidOID: UInt32 = 26
    private static let float4OID: UInt32 = 700, numericOID: UInt32 = 1700

    private let url: String
    private var handle: OpaquePointer?
    /// Translated SQL per original SQL (translation does not depend on the connection).
    private var translations: [String: PostgresDialect.Translation] = [:]
    /// Prepared statement names per (SQL, parameter types); cleared when the connection is re-opened.
    private var prepared: [String: String] = [:]
    private var nextStatementNumber = 0
    private var isClosed = false

    /// Number of cached prepared statements (for tests).
    var preparedStatementCount: Int { prepared.count }

    /// Connects to `url` (a `postgres://` URL or a libpq connection string).
    init(url: String) throws(StorageError) {
        self.url = url
        try connect()
    }

    deinit {
        close()
    }

    private func connect() throws(StorageError) {
        if let handle {
            PQfinish(handle)
            self.handle = nil
        }
        prepared.removeAll()
        // Later keywords override earlier ones: settings in the URL win over the defaults before
        // it, but not over client_encoding after it (values are decoded as UTF-8).
        // Keepalives notice a silently dropped peer (a failed-over database) within about a minute.
        let keywords = ["connect_timeout", "keepalives_idle", "keepalives_interval", "keepalives_count",
                        "application_name", "dbname", "client_encoding"]
        let values = ["\(Self.defaultConnectTimeoutSeconds)", "30", "10", "3", "herald", url, "UTF8"]
        let connection = withCStringArray(keywords) { keywordPointers in
            withCStringArray(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw StorageError.connectionLost("out of memory", sql: nil)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            // libpq's message names host and port, never the password.
            let reason = String(cString: PQerrorMessage(connection)).trimmingTrailingNewlines()
            PQfinish(connection)
            throw StorageError.connectionLost(reason, sql: nil)
        }
        // NOTICEs (e.g. "relation already exists, skipping") would otherwise go to stderr.
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        handle = connection
    }

    /// The live handle; re-opens a connection that broke since its last use.
    private func liveHandle(sql: String?) throws(StorageError) -> OpaquePointer {
        guard !isClosed else { throw StorageError.closed(sql: sql) }
        if let handle, PQstatus(handle) == CONNECTION_OK { return handle }
        // Never inside a transaction body: a fresh connection would run the rest of the body
        // outside the transaction, each statement committing on its own.
        guard !isInTransactionBody else {
            throw StorageError.connectionLost("the connection was lost during the transaction", sql: sql)
        }
        try connect()
        guard let handle else { throw StorageError.connectionLost("no connection", sql: sql) }
        return handle
    }

    // MARK: - Statements

    /// Runs one statement and returns the number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int {
        let result = try run(sql, parameters)
        defer { PQclear(result) }
        // PQcmdTuples also counts the rows a SELECT returned; SQLite reports 0 for those.
        let status = String(cString: PQcmdStatus(result))
        guard ["INSERT", "UPDATE", "DELETE", "MERGE"].contains(where: { status.hasPrefix($0) }) else { return 0 }
        return Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    /// Runs one statement and returns its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [Row] {
        let result = try run(sql, parameters)
        defer { PQclear(result) }
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        guard columnCount > 0 else { return [] }
        let layout = RowLayout((0..<columnCount).map { String(cString: PQfname(result, $0)) })
        let types = (0..<columnCount).map { PQftype(result, $0) }
        var rows: [Row] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                values.append(Self.value(result, row: row, column: column, type: types[Int(column)]))
            }
            rows.append(Row(layout: layout, values: values))
        }
        return rows
    }

    /// Inside write transactions, each data-changing statement runs under a savepoint, so a
    /// failed statement (say a unique violation the body catches) undoes only itself and the
    /// transaction goes on, as on SQLite; PostgreSQL would otherwise abort the whole transaction.
    private var statementSavepoints = false
    /// True from BEGIN until COMMIT/ROLLBACK: the connection must not be silently re-opened.
    private var isInTransactionBody = false

    /// Runs a statement without caching it (transaction control, setup).
    private func runUncached(_ sql: String) throws(StorageError) {
        let handle = try liveHandle(sql: sql)
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, handle: handle, sql: sql)
    }

    /// Runs the statement, under a savepoint when it changes data inside a write transaction.
    private func run(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> OpaquePointer {
        let firstWord = sql.drop(while: { $0.isWhitespace || $0 == "(" }).prefix(while: { $0.isLetter }).uppercased()
        guard statementSavepoints, ["INSERT", "UPDATE", "DELETE", "WITH"].contains(firstWord) else {
            return try runStatement(sql, parameters)
        }
        try runUncached("SAVEPOINT herald_statement")
        let result: OpaquePointer
        do {
            result = try runStatement(sql, parameters)
        } catch {
            if let handle, PQstatus(handle) == CONNECTION_OK { try? runUncached("ROLLBACK TO SAVEPOINT herald_statement") }
            throw error
        }
        do {
            try runUncached("RELEASE SAVEPOINT herald_statement")
        } catch {
            PQclear(result)
            throw error
        }
        return result
    }

    /// Translates, prepares (once per SQL and parameter types) and runs; the caller clears the result.
    private func runStatement(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> OpaquePointer {
        let translation: PostgresDialect.Translation
        if let cached = translations[sql] {
            translation = cached
        } else {
            translation = try PostgresDialect.translate(sql)
            if translations.count >= Self.statementCacheLimit { translations.removeAll() }
            translations[sql] = translation
        }
        guard parameters.count == translation.parameterCount else {
            throw StorageError(code: .other, sql: sql,
                               message: "the statement has \(translation.parameterCount) parameter(s) but \(parameters.count) value(s) were given")
        }
        let handle = try liveHandle(sql: sql)
        let types = parameters.map(Self.typeOID)
        let encoded = parameters.map(Self.encode)
        let formats: [Int32] = parameters.map { if case .text = $0 { 1 } else if case .blob = $0 { 1 } else { 0 } }
        let lengths: [Int32] = encoded.map { Int32($0?.count ?? 0) }

        // Only plain DML is worth a named prepared statement; DDL and the like run unnamed, so a
        // cached plan never outlives the schema it was made for.
        let firstWord = translation.sql.drop(while: { $0.isWhitespace || $0 == "(" }).prefix(while: { $0.isLetter }).uppercased()
        let cacheable = ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(firstWord)
        if ["CREATE", "ALTER", "DROP"].contains(firstWord), !prepared.isEmpty {
            // A cached `SELECT *` whose table changed would fail with "cached plan must not
            // change result type"; schema changes made by other connections (another node's
            // migration) are not seen here, which is why migrations run at start.
            try runUncached("DEALLOCATE ALL")
            prepared.removeAll()
        }
        var statementName: String?
        if cacheable {
            let key = sql + "\u{0}" + types.map { String($0) }.joined(separator: ",")
            if let name = prepared[key] {
                statementName = name
            } else {
                if prepared.count >= Self.statementCacheLimit {
                    try runUncached("DEALLOCATE ALL")
                    prepared.removeAll()
                }
                nextStatementNumber += 1
                let name = "herald_\(nextStatementNumber)"
                let preparation = PQprepare(handle, name, translation.sql, Int32(types.count), types)
                defer { PQclear(preparation) }
                try check(preparation, handle: handle, sql: sql)
                prepared[key] = name
                statementName = name
            }
        }
        let result = withParameterPointers(encoded) { values in
            if let statementName {
                return PQexecPrepared(handle, statementName, Int32(encoded.count), values, lengths, formats, 0)
            }
            return PQexecParams(handle, translation.sql, Int32(encoded.count), types, values, lengths, formats, 0)
        }
        do {
            try check(result, handle: handle, sql: sql)
        } catch {
            PQclear(result)
            throw error
        }
        guard let result else { throw StorageError.connectionLost("no result", sql: sql) }
        return result
    }

    private func check(_ result: OpaquePointer?, handle: OpaquePointer, sql: String) throws(StorageError) {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY { return }
        if let result, let state = PQresultErrorField(result, herald_pg_diag_sqlstate()) {
            let primary = PQresultErrorField(result, herald_pg_diag_message_primary()).map { String(cString: $0) } ?? "PostgreSQL error"
            throw StorageError(sqlState: String(cString: state), primaryMessage: primary, sql: sql)
        }
        // No SQLSTATE: the connection itself failed (server gone, socket closed).
        let reason = String(cString: PQerrorMessage(handle)).trimmingTrailingNewlines()
        throw StorageError.connectionLost(reason.isEmpty ? "no response from the server" : reason, sql: sql)
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction of `kind`: commits when it returns, rolls back and rethrows
    /// its error unchanged when it throws.
    func transaction<T>(_ kind: TransactionKind, _ body: (any SQLExecutor) throws -> T) throws -> T {
        do {
            try runUncached(kind.beginSQL)
        } catch {
            // An idle connection whose server restarted only finds out now; nothing has run
            // yet, so re-open it and begin again (this fails with .unavailable if the server is still down).
            guard !isClosed, !isConnected else { throw error }
            try connect()
            try runUncached(kind.beginSQL)
        }
        statementSavepoints = kind != .readOnlySnapshot
        isInTransactionBody = true
        defer {
            statementSavepoints = false
            isInTransactionBody = false
        }
        let result: T
        do {
            result = try body(PostgresExecutor(connection: self))
        } catch {
            rollback()
            throw error
        }
        guard let handle, PQtransactionStatus(handle) == PQTRANS_INTRANS else {
            rollback()
            // The body ended the transaction (COMMIT/ROLLBACK), or swallowed an error that
            // aborted it: committing now would hide a partial change.
            throw StorageError(code: .other, message: "the transaction ended or failed inside the body; do not run BEGIN/COMMIT/ROLLBACK in a transaction body, and do not swallow its errors")
        }
        do {
            try runUncached("COMMIT")
        } catch {
            rollback()
            throw error
        }
        return result
    }

    private var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Best effort: the caller is already reporting the error that caused the rollback.
    private func rollback() {
        guard let handle, PQstatus(handle) == CONNECTION_OK, PQtransactionStatus(handle) != PQTRANS_IDLE else { return }
        try? runUncached("ROLLBACK")
    }

    /// Closes the connection; later use fails.
    func close() {
        isClosed = true
        if let handle {
            PQfinish(handle)
            self.handle = nil
        }
    }

    // MARK: - Values

    private static func typeOID(_ value: SQLValue) -> UInt32 {
        switch value {
        case .null: 0  // inferred by the server from where the placeholder stands
        case .integer: int8OID
        case .real: float8OID
        case .text: textOID
        case .blob: byteaOID
        }
    }

    /// Integers and doubles go as text; text and bytes as binary (explicit length, so neither
    /// hex-encoding nor a terminating NUL is needed). nil is SQL NULL.
    private static func encode(_ value: SQLValue) -> [UInt8]? {
        switch value {
        case .null: return nil
        case .integer(let integer): return Array(String(integer).utf8)
        case .real(let real):
            if real.isNaN { return Array("NaN".utf8) }
            if real.isInfinite { return Array((real < 0 ? "-Infinity" : "Infinity").utf8) }
            return Array("\(real)".utf8)
        case .text(let text): return Array(text.utf8)
        case .blob(let bytes): return bytes
        }
    }

    private static func value(_ result: OpaquePointer, row: Int32, column: Int32, type: UInt32) -> SQLValue {
        if PQgetisnull(result, row, column) != 0 { return .null }
        let length = Int(PQgetlength(result, row, column))
        guard let raw = PQgetvalue(result, row, column) else { return .null }
        let text = raw.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
        switch type {
        case int2OID, int4OID, int8OID, oidOID:
            return Int64(text).map(SQLValue.integer) ?? .text(text)
        case float4OID, float8OID, numericOID:
            switch text {
            case "NaN": return .real(.nan)
            case "Infinity": return .real(.infinity)
            case "-Infinity": return .real(-.infinity)
            default: return Double(text).map(SQLValue.real) ?? .text(text)
            }
        case boolOID:
            return .integer(text == "t" ? 1 : 0)
        case byteaOID:
            return .blob(decodeHexBytea(text))
        default:
            return .text(text)
        }
    }

    /// bytea's text output (`bytea_output = hex`, the default): `\x` then two hex digits per byte.
    static func decodeHexBytea(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8.dropFirst(2))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        func nibble(_ c: UInt8) -> UInt8 {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            case 65...70: c - 55
            default: 0
            }
        }
        var index = 0
        while index + 1 < digits.count {
            bytes.append(nibble(digits[index]) << 4 | nibble(digits[index + 1]))
            index += 2
        }
        return bytes
    }
}

/// The `SQLExecutor` a transaction body receives: valid only on the connection's thread during the body.
struct PostgresExecutor: SQLExecutor {
    let connection: PostgresConnection

    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int {
        try connection.execute(sql, parameters)
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [Row] {
        try connection.query(sql, parameters)
    }
}

@available(*, unavailable, message: "use the executor only inside its read/write body")
extension PostgresExecutor: Sendable {}

@available(*, unavailable, message: "a connection is confined to its queue; use PostgresPool")
extension PostgresConnection: Sendable {}

/// Calls `body` with a NULL-terminated array of C strings that live for the call.
private func withCStringArray<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    var pointers: [UnsafeMutablePointer<CChar>?] = strings.map { strdup($0) }
    defer { pointers.forEach { free($0) } }
    pointers.append(nil)
    return body(pointers.map { UnsafePointer($0) })
}

/// Calls `body` with pointers to each value's bytes (nil for NULL), NUL-terminated; empty
/// values get a valid non-nil pointer, since nil would mean NULL.
private func withParameterPointers<R>(_ values: [[UInt8]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let storage: [UnsafeMutablePointer<CChar>?] = values.map { value in
        guard let value else { return nil }
        // NUL-terminated: text-format values (integers, doubles) are read as C strings.
        let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: value.count + 1)
        value.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { UnsafeMutableRawPointer(pointer).copyMemory(from: base, byteCount: bytes.count) }
        }
        pointer[value.count] = 0
        return pointer
    }
    defer { storage.forEach { $0?.deallocate() } }
    return body(storage.map { UnsafePointer($0) })
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = self
        while text.last?.isNewline == true { text.removeLast() }
        return text
    }
}

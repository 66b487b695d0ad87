import CPostgres
import Foundation

/// One libpq connection (`PGconn*`), its prepared-statement cache and its reconnect logic.
///
/// Not thread-safe: used by one thread at a time, which `ConnectionPool` guarantees by running
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
    /// Result columns per SQL text: the same text names the same columns until the schema
    /// changes (cleared then, with the prepared statements), so a result's name index is built
    /// once, not for every result (3 % of Herald's CPU in a login on PostgreSQL, perf).
    private var layouts: [String: RowLayout] = [:]
    /// Prepared statement names per (SQL, parameter types); cleared when the connection is re-opened.
    private var prepared: [PostgresCommand.Key: String] = [:]
    private var nextStatementNumber = 0
    private var isClosed = false

    /// Number of cached prepared statements (for tests).
    var preparedStatementCount: Int { prepared.count }
    /// Requests sent to the server and waited for since the connection was made (tests count
    /// a transaction's round trips with it); a pipeline counts once, a read-only COMMIT (not
    /// waited for) not at all.
    private(set) var roundTrips = 0 {
        didSet { sharedRoundTrips?.add(roundTrips - oldValue) }
    }
    /// The count of every connection of a database (`PostgresDatabase.roundTrips`).
    private let sharedRoundTrips: PostgresRoundTrips?

    /// Connects to `url` (a `postgres://` URL or a libpq connection string); its round trips
    /// are added to `roundTrips` when given.
    init(url: String, roundTrips: PostgresRoundTrips? = nil) throws(StorageError) {
        self.url = url
        self.sharedRoundTrips = roundTrips
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
        backend = try identifyBackend(connection)
    }

    /// The server session serving this connection: its process id and start time, which
    /// together name it on any server (a process id alone may be reused, or exist on another
    /// member after a failover).
    struct Backend {
        let processID: Int64
        let startMicroseconds: Int64
    }

    /// The session of the current handle; kept when a COMMIT's answer is lost, to learn when
    /// that session has ended (`hasEnded`).
    private(set) var backend: Backend?
    /// The session that was running the COMMIT whose answer was lost, if the last transaction's was.
    private(set) var backendOfLostCommit: Backend?

    private static let backendSQL = """
        SELECT pid, (extract(epoch FROM backend_start) * 1000000)::bigint AS started
        FROM pg_stat_activity WHERE pid = pg_backend_pid()
        """

    /// One round trip per connection opened.
    private func identifyBackend(_ connection: OpaquePointer) throws(StorageError) -> Backend {
        roundTrips += 1
        let result = PQexec(connection, Self.backendSQL)
        defer { PQclear(result) }
        try check(result, handle: connection, sql: Self.backendSQL)
        guard let result, PQntuples(result) == 1,
              let processID = Int64(String(cString: PQgetvalue(result, 0, 0))),
              let started = Int64(String(cString: PQgetvalue(result, 0, 1))) else {
            throw StorageError.connectionLost("the server did not name its session", sql: Self.backendSQL)
        }
        return Backend(processID: processID, startMicroseconds: started)
    }

    /// Whether `session` has ended: it no longer exists on the server this connection reaches
    /// now (re-opened if needed). A session still running may yet commit, so a lost COMMIT's
    /// outcome is read only once its session is gone; on another server (after a failover)
    /// it never existed.
    func hasEnded(_ session: Backend) throws(StorageError) -> Bool {
        let rows = try query("SELECT 1 AS running FROM pg_stat_activity WHERE pid = ? AND (extract(epoch FROM backend_start) * 1000000)::bigint = ?",
                             [.integer(session.processID), .integer(session.startMicroseconds)])
        return rows.isEmpty
    }

    /// The live handle; re-opens a connection that broke since its last use.
    private func liveHandle(sql: String?) throws(StorageError) -> OpaquePointer {
        guard !isClosed else { throw StorageError.closed(sql: sql) }
        if unreadCommit, let handle {
            // The answer to a read-only transaction's COMMIT (long arrived, as a rule); a failure
            // there changed nothing, and a broken connection shows in its status below.
            unreadCommit = false
            while let result = PQgetResult(handle) { PQclear(result) }
        }
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

    /// Queues a data-changing statement for the next round trip in an optimistic write (see
    /// `SQLExecutor.executeDeferred`); runs it at once elsewhere.
    func executeDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) {
        guard writeMode == .optimistic else {
            try execute(sql, parameters)
            return
        }
        queued.append(try command(sql, parameters))
    }

    /// Queues a read for the next round trip in an optimistic write (see
    /// `SQLExecutor.queryDeferred`); runs it at once elsewhere.
    func queryDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> DeferredRows {
        guard writeMode == .optimistic else { return DeferredRows(try query(sql, parameters)) }
        let rows = DeferredRows()
        deferredReads[queued.count] = rows
        queued.append(try command(sql, parameters))
        readsOfAttempt.append((rows, sql, parameters))
        return rows
    }

    /// Runs again, in the current transaction, the deferred reads of the last attempt that
    /// were never answered: its COMMIT's answer was lost, and a read of the database as it
    /// is now found that it committed (`PostgresDatabase`'s lost-commit resolution).
    func answerUnansweredReads() throws(StorageError) {
        for (rows, sql, parameters) in readsOfAttempt where !rows.isFilled {
            rows.fill(try query(sql, parameters))
        }
    }

    /// Runs one statement and returns its rows.
    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [Row] {
        let result = try run(sql, parameters)
        defer { PQclear(result) }
        return rows(of: result, sql: sql)
    }

    /// Runs statements in one round trip (see `SQLExecutor.queryBatch`); one at a time, each
    /// under its savepoint, in a guarded attempt.
    func queryBatch(_ statements: [(sql: String, parameters: [SQLValue])]) throws(StorageError) -> [[Row]] {
        guard writeMode != .guarded else {
            var rows: [[Row]] = []
            for statement in statements { rows.append(try query(statement.sql, statement.parameters)) }
            return rows
        }
        var commands: [PostgresCommand] = []
        for statement in statements { commands.append(try command(statement.sql, statement.parameters)) }
        let results = try send(commands)
        defer { for case let result? in results { PQclear(result) } }
        return zip(results, statements).map { result, statement in result.map { rows(of: $0, sql: statement.sql) } ?? [] }
    }

    private func rows(of result: OpaquePointer, sql: String) -> [Row] {
        let columnCount = PQnfields(result)
        let rowCount = PQntuples(result)
        guard columnCount > 0 else { return [] }
        let layout: RowLayout
        if let known = layouts[sql], known.names.count == Int(columnCount) {
            layout = known
        } else {
            layout = RowLayout((0..<columnCount).map { String(cString: PQfname(result, $0)) })
            if layouts.count >= Self.statementCacheLimit { layouts.removeAll() }
            layouts[sql] = layout
        }
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

    /// How a write transaction's data-changing statements and `withSavepoint` bodies run.
    ///
    /// On SQLite a failed statement undoes only itself and a body may catch it and go on; on
    /// PostgreSQL it aborts the whole transaction, unless it ran under a savepoint. A savepoint
    /// per statement costs two round trips and, once it writes, a transaction id of its own, on
    /// the success path too. So a write transaction first runs `.optimistic`: no savepoint at
    /// all. A data-changing statement that fails (other than a serialization failure, which the
    /// caller retries) or a `withSavepoint` body that throws marks the attempt (`needsReplay`):
    /// it is rolled back as a whole and the body runs once more `.guarded`, with a savepoint
    /// around each data-changing statement and each `withSavepoint` body, which gives exactly
    /// SQLite's partial undo. A write body may run more than once by contract (`Database.write`),
    /// so the replay is safe; only failure paths pay for it.
    private enum WriteMode {
        case readOnly, optimistic, guarded
    }
    private var writeMode = WriteMode.readOnly
    /// Set in an `.optimistic` attempt that would have needed a savepoint.
    private var needsReplay = false
    /// True from BEGIN until COMMIT/ROLLBACK: the connection must not be silently re-opened.
    private var isInTransactionBody = false
    /// Commands waiting for the next round trip, in order: the transaction's BEGIN until its
    /// first statement (`beginQueued`), then deferred writes (`executeDeferred`). Whatever
    /// runs next is sent with them, COMMIT included.
    private var queued: [PostgresCommand] = []
    /// The deferred reads among `queued`, by position: filled when their round trip is answered.
    private var deferredReads: [Int: DeferredRows] = [:]
    /// Every deferred read of the current (or last) write attempt, with its statement.
    private var readsOfAttempt: [(rows: DeferredRows, sql: String, parameters: [SQLValue])] = []
    private var beginQueued = false
    /// Set when the connection was found lost by the round trip that carried BEGIN (an idle
    /// connection whose server restarted): nothing of the transaction ran, so it runs again on
    /// a new connection.
    private var lostBeforeBegin = false
    /// While COMMIT is being sent: a connection lost then leaves the outcome unknown, so the
    /// transaction is never run again.
    private var isCommitting = false
    /// Whether the last transaction sent its COMMIT. After a lost connection it tells a
    /// transaction that may have committed (the answer was lost: ambiguous) from one that
    /// certainly did not (the server rolls back a transaction whose session ends before COMMIT).
    private(set) var commitSent = false
    /// A read-only transaction's COMMIT was sent without waiting: its answer is read before the
    /// connection's next command.
    private var unreadCommit = false

    /// Runs a statement without caching it (transaction control, setup), after what is queued.
    private func runUncached(_ sql: String) throws(StorageError) {
        if !queued.isEmpty { _ = try send([]) }
        let handle = try liveHandle(sql: sql)
        roundTrips += 1
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, handle: handle, sql: sql)
    }

    /// Runs the statement (with whatever is queued before it, in one round trip); one that
    /// changes data runs under a savepoint in a guarded attempt.
    private func run(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> OpaquePointer {
        guard writeMode == .guarded, try translation(of: sql).kind == .dataChange else {
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
        let command = try command(sql, parameters)
        guard let result = try send([command]).first ?? nil else { throw StorageError.connectionLost("no result", sql: sql) }
        return result
    }

    /// The command for a statement: translated, its parameters encoded, and a named prepared
    /// statement (prepared when it is first sent) for plain DML.
    private func command(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> PostgresCommand {
        let translation = try translation(of: sql)
        guard parameters.count == translation.parameterCount else {
            throw StorageError(code: .other, sql: sql,
                               message: "the statement has \(translation.parameterCount) parameter(s) but \(parameters.count) value(s) were given")
        }
        let types = parameters.map(Self.typeOID)
        let encoded = parameters.map(Self.encode)
        let formats: [Int32] = parameters.map { if case .text = $0 { 1 } else if case .blob = $0 { 1 } else { 0 } }
        let lengths: [Int32] = encoded.map { Int32($0?.count ?? 0) }

        // Only plain DML is worth a named prepared statement; DDL and the like run unnamed, so a
        // cached plan never outlives the schema it was made for.
        if translation.kind == .schemaChange {
            // A cached `SELECT *` whose table changed would fail with "cached plan must not
            // change result type" (or name the old columns); schema changes made by other
            // connections (another node's migration) are not seen here, which is why migrations
            // run at start.
            if !prepared.isEmpty {
                try runUncached("DEALLOCATE ALL")
                prepared.removeAll()
            }
            layouts.removeAll()
        }
        var form = PostgresCommand.Form.unnamed
        if translation.kind.isPreparedByName {
            let key = PostgresCommand.Key(sql: sql, types: types)
            if let name = prepared[key] {
                form = .prepared(name: name)
            } else {
                if prepared.count >= Self.statementCacheLimit {
                    try runUncached("DEALLOCATE ALL")
                    prepared.removeAll()
                }
                nextStatementNumber += 1
                let name = "herald_\(nextStatementNumber)"
                // Counted as prepared now, so a statement queued twice is prepared once; `send`
                // forgets it again should its preparation fail.
                prepared[key] = name
                form = .prepareAndRun(name: name, key: key)
            }
        }
        return PostgresCommand(sql: sql, text: translation.sql, form: form, changesData: translation.kind == .dataChange,
                               types: types, values: encoded, lengths: lengths, formats: formats)
    }

    /// `sql` translated for PostgreSQL, from the cache when it was translated before.
    private func translation(of sql: String) throws(StorageError) -> PostgresDialect.Translation {
        if let cached = translations[sql] { return cached }
        let translation = try PostgresDialect.translate(sql)
        if translations.count >= Self.statementCacheLimit { translations.removeAll() }
        translations[sql] = translation
        return translation
    }

    /// Sends what is queued, then `finals`, in one round trip: a pipeline when there is more
    /// than one command or a preparation. Returns the results of `finals` (the caller clears
    /// them). Throws the first failure; in an optimistic write, a failed data change marks the
    /// attempt for the guarded replay, and a connection lost before BEGIN reached the server
    /// marks it for a re-run on a new connection.
    private func send(_ finals: [PostgresCommand]) throws(StorageError) -> [OpaquePointer?] {
        var commands = queued
        queued.removeAll()
        let reads = deferredReads
        deferredReads.removeAll()
        let sendsBegin = beginQueued
        beginQueued = false
        commands += finals
        guard !commands.isEmpty else { return [] }
        let handle = try liveHandle(sql: commands.last?.sql)
        roundTrips += 1
        let results: [OpaquePointer?]
        var intact = true
        switch (commands.count, commands[0].form) {
        case (1, .prepared), (1, .unnamed):
            results = [Self.runAlone(handle, commands[0])]
        default:
            (results, intact) = PostgresPipeline.run(handle, commands)
        }
        // A connection that failed or answered out of step mid-pipeline is never reused
        // (dropped once its error message has been read).
        defer { if !intact { dropConnection() } }
        for (index, command) in commands.enumerated() {
            do {
                try check(results[index], handle: handle, sql: command.sql)
            } catch {
                if index == 0, sendsBegin, !isCommitting, !intact || !isConnected { lostBeforeBegin = true }
                // A serialization failure or deadlock dooms the transaction on either path and is
                // retried by the caller; a lost connection cannot be replayed on.
                if writeMode == .optimistic, command.changesData,
                   error.sqlState.map({ !$0.hasPrefix("40") && !$0.hasPrefix("08") }) ?? false {
                    needsReplay = true
                }
                // This command and those the server then skipped may not be prepared.
                for case .prepareAndRun(_, let key) in commands[index...].map(\.form) { prepared[key] = nil }
                for case let result? in results { PQclear(result) }
                throw error
            }
        }
        for (index, deferred) in reads {
            if let result = results[index] { deferred.fill(rows(of: result, sql: commands[index].sql)) }
        }
        for case let result? in results.dropLast(finals.count) { PQclear(result) }
        return Array(results.suffix(finals.count))
    }

    /// One command without pipeline mode.
    private static func runAlone(_ handle: OpaquePointer, _ command: PostgresCommand) -> OpaquePointer? {
        withParameterPointers(command.values) { values in
            if case .prepared(let name) = command.form {
                return PQexecPrepared(handle, name, Int32(command.values.count), values, command.lengths, command.formats, 0)
            }
            return PQexecParams(handle, command.text, Int32(command.values.count), command.types, values, command.lengths,
                                command.formats, 0)
        }
    }

    private func dropConnection() {
        if let handle {
            PQfinish(handle)
            self.handle = nil
        }
        prepared.removeAll()
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

    /// `SQLExecutor.withSavepoint` on this connection: optimistic attempts run `body` without a
    /// savepoint and mark themselves for replay when it throws; guarded ones use a real one.
    func withSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        if writeMode == .optimistic {
            do {
                return try body()
            } catch {
                needsReplay = true
                throw error
            }
        }
        let name = "herald_" + name
        try runUncached("SAVEPOINT \(name)")
        let result: T
        do {
            result = try body()
        } catch {
            try runUncached("ROLLBACK TO SAVEPOINT \(name)")
            try runUncached("RELEASE SAVEPOINT \(name)")
            throw error
        }
        try runUncached("RELEASE SAVEPOINT \(name)")
        return result
    }

    // MARK: - Transactions

    /// The optimistic attempt was rolled back because it would have needed a savepoint.
    private struct ReplayGuarded: Error {}

    /// The connection was lost before BEGIN reached the server: run again on a new one.
    private struct ReconnectAndRetry: Error {}

    /// Runs `body` in a transaction of `kind`: commits when it returns, rolls back and rethrows
    /// its error unchanged when it throws. A write transaction runs optimistically first and
    /// is replayed guarded when that needed a savepoint (see `WriteMode`). BEGIN travels with
    /// the body's first statement, and deferred writes with the next statement or COMMIT.
    func transaction<T>(_ kind: TransactionKind, _ body: (any SQLExecutor) throws -> T) throws -> T {
        let mode: WriteMode = kind == .readOnlySnapshot ? .readOnly : .optimistic
        do {
            return try attemptOnLiveConnection(kind, mode, body)
        } catch is ReplayGuarded {
            return try attemptOnLiveConnection(kind, .guarded, body)
        }
    }

    private func attemptOnLiveConnection<T>(_ kind: TransactionKind, _ mode: WriteMode,
                                            _ body: (any SQLExecutor) throws -> T) throws -> T {
        do {
            return try attempt(kind, mode, body, mayReconnect: true)
        } catch is ReconnectAndRetry {
            // An idle connection whose server restarted only finds out now; nothing has run
            // yet, so re-open it and begin again (this fails with .unavailable if the server is still down).
            try connect()
            return try attempt(kind, mode, body, mayReconnect: false)
        }
    }

    private func attempt<T>(_ kind: TransactionKind, _ mode: WriteMode, _ body: (any SQLExecutor) throws -> T,
                            mayReconnect: Bool) throws -> T {
        commitSent = false
        backendOfLostCommit = nil
        // A read-only transaction keeps them: it may be the one that answers them (`answerUnansweredReads`).
        if mode != .readOnly { readsOfAttempt.removeAll() }
        _ = try liveHandle(sql: kind.beginSQL)
        queued = [.plain(kind.beginSQL)]
        beginQueued = true
        writeMode = mode
        needsReplay = false
        lostBeforeBegin = false
        isInTransactionBody = true
        defer {
            discardQueued()
            writeMode = .readOnly
            needsReplay = false
            isInTransactionBody = false
            isCommitting = false
        }
        let result: T
        do {
            result = try body(PostgresExecutor(connection: self))
        } catch {
            rollback()
            if lostBeforeBegin, mayReconnect, !isClosed { throw ReconnectAndRetry() }
            if needsReplay, isConnected { throw ReplayGuarded() }
            throw error
        }
        if lostBeforeBegin {
            rollback()
            guard mayReconnect, !isClosed else {
                throw StorageError.connectionLost("the connection was lost during the transaction", sql: nil)
            }
            throw ReconnectAndRetry()
        }
        if needsReplay {
            rollback()
            guard isConnected else { throw StorageError.connectionLost("the connection was lost during the transaction", sql: nil) }
            throw ReplayGuarded()
        }
        if beginQueued, queued.count == 1 {
            return result  // the body ran no statement: there is no transaction to commit
        }
        if !beginQueued {
            guard let handle, PQtransactionStatus(handle) == PQTRANS_INTRANS else {
                rollback()
                // The body ended the transaction (COMMIT/ROLLBACK), or swallowed an error that
                // aborted it: committing now would hide a partial change.
                throw StorageError(code: .other, message: "the transaction ended or failed inside the body; do not run BEGIN/COMMIT/ROLLBACK in a transaction body, and do not swallow its errors")
            }
        }
        if mode == .readOnly, queued.isEmpty, let handle,
           PQsendQueryParams(handle, "COMMIT", 0, nil, nil, nil, nil, 0) == 1 {
            // A read-only transaction's COMMIT decides nothing (its answers are already read)
            // and only ends the snapshot, which the server does on receipt: the caller need not
            // wait for it. Not a round trip in `roundTrips`.
            unreadCommit = true
            return result
        }
        do {
            isCommitting = true
            commitSent = true
            for case let result? in try send([.plain("COMMIT")]) { PQclear(result) }
        } catch {
            if !isConnected { backendOfLostCommit = backend }
            rollback()
            if needsReplay, isConnected { throw ReplayGuarded() }
            throw error
        }
        return result
    }

    /// Drops what was queued and never sent; a statement it would have prepared is not.
    private func discardQueued() {
        for case .prepareAndRun(_, let key) in queued.map(\.form) { prepared[key] = nil }
        queued.removeAll()
        deferredReads.removeAll()
        beginQueued = false
    }

    private var isConnected: Bool {
        guard let handle else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// Best effort: the caller is already reporting the error that caused the rollback.
    private func rollback() {
        discardQueued()
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

    func withSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T {
        try connection.withSavepoint(name, body)
    }

    func executeDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) {
        try connection.executeDeferred(sql, parameters)
    }

    func queryBatch(_ statements: [(sql: String, parameters: [SQLValue])]) throws(StorageError) -> [[Row]] {
        try connection.queryBatch(statements)
    }

    func queryDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> DeferredRows {
        try connection.queryDeferred(sql, parameters)
    }
}

@available(*, unavailable, message: "use the executor only inside its read/write body")
extension PostgresExecutor: Sendable {}

@available(*, unavailable, message: "a connection is confined to its queue; use ConnectionPool")
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
func withParameterPointers<R>(_ values: [[UInt8]?], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
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


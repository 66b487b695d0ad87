import CPostgres

/// One statement ready to send: its SQL as PostgreSQL reads it, its parameters encoded, and how
/// it runs (a cached prepared statement, prepared in the same round trip when new, or unnamed).
struct PostgresCommand {
    enum Form {
        /// Runs unnamed (transaction control, DDL).
        case unnamed
        /// Runs the prepared statement `name`.
        case prepared(name: String)
        /// Prepares `name` (under the cache key `key`), then runs it.
        case prepareAndRun(name: String, key: Key)
    }

    /// What a prepared statement is cached under: the SQL as the module wrote it and the
    /// parameters' type OIDs (one SQL text bound with other types is another statement).
    struct Key: Hashable {
        let sql: String
        let types: [UInt32]
    }

    /// The SQL as the module wrote it, for error messages.
    let sql: String
    /// The SQL PostgreSQL runs (`PostgresDialect`'s translation).
    let text: String
    let form: Form
    /// True for INSERT/UPDATE/DELETE/WITH: a failure inside an optimistic write needs the guarded replay.
    let changesData: Bool
    let types: [UInt32]
    let values: [[UInt8]?]
    let lengths: [Int32]
    let formats: [Int32]

    /// Transaction control and other parameterless SQL, sent as is.
    static func plain(_ sql: String) -> PostgresCommand {
        PostgresCommand(sql: sql, text: sql, form: .unnamed, changesData: false, types: [], values: [], lengths: [], formats: [])
    }
}

/// Sends several commands in one round trip, in libpq's pipeline mode (libpq 14+): they run in
/// order, and once one fails the server skips the rest (`PGRES_PIPELINE_ABORTED`) up to the
/// sync. That is what lets a transaction's last writes travel with its COMMIT: a failed write
/// means COMMIT never runs, and the caller rolls back.
enum PostgresPipeline {
    /// One result per command, in order (the caller clears them): a command whose preparation
    /// failed gets the preparation's error, one that got no answer nil. `intact` is false when
    /// the connection failed or answered out of step: the caller must then drop it.
    static func run(_ handle: OpaquePointer, _ commands: [PostgresCommand]) -> (results: [OpaquePointer?], intact: Bool) {
        var results: [OpaquePointer?] = []
        func broken() -> (results: [OpaquePointer?], intact: Bool) {
            results += Array(repeating: nil, count: commands.count - results.count)
            return (results, false)
        }
        guard PQenterPipelineMode(handle) == 1 else { return broken() }
        for command in commands {
            guard send(handle, command) else { return broken() }
        }
        guard PQpipelineSync(handle) == 1 else { return broken() }
        for command in commands {
            if case .prepareAndRun = command.form {
                guard let preparation = nextResult(handle) else { return broken() }
                if PQresultStatus(preparation) == PGRES_COMMAND_OK {
                    PQclear(preparation)
                    guard let execution = nextResult(handle) else { return broken() }
                    results.append(execution)
                } else {
                    results.append(preparation)
                    guard let skipped = nextResult(handle) else { return broken() }
                    PQclear(skipped)
                }
            } else {
                guard let result = nextResult(handle) else { return broken() }
                results.append(result)
            }
        }
        guard let sync = PQgetResult(handle) else { return broken() }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced, PQexitPipelineMode(handle) == 1 else { return broken() }
        return (results, true)
    }

    private static func send(_ handle: OpaquePointer, _ command: PostgresCommand) -> Bool {
        withParameterPointers(command.values) { values in
            switch command.form {
            case .unnamed:
                return PQsendQueryParams(handle, command.text, Int32(command.values.count), command.types, values,
                                         command.lengths, command.formats, 0) == 1
            case .prepared(let name):
                return PQsendQueryPrepared(handle, name, Int32(command.values.count), values, command.lengths,
                                           command.formats, 0) == 1
            case .prepareAndRun(let name, _):
                return PQsendPrepare(handle, name, command.text, Int32(command.types.count), command.types) == 1
                    && PQsendQueryPrepared(handle, name, Int32(command.values.count), values, command.lengths,
                                           command.formats, 0) == 1
            }
        }
    }

    /// A command's result, then the NULL that ends it; nil when the command had none.
    private static func nextResult(_ handle: OpaquePointer) -> OpaquePointer? {
        guard let result = PQgetResult(handle) else { return nil }
        while let extra = PQgetResult(handle) { PQclear(extra) }
        return result
    }
}

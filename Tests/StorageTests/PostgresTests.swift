import Foundation
import HeraldTestSupport
import Synchronization
import Testing
@testable import Storage

@Suite("PostgreSQL", .timeLimit(.minutes(3)))
struct PostgresTests {
    @Test func connectsToTheDatabaseNamedInTheURL() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let name = try #require(url.split(separator: "/").last?.split(separator: "?").first.map(String.init))
            // Settings in the URL apply, except the client encoding, which stays UTF-8.
            let database = try PostgresDatabase(url: url + "&application_name=node-7&client_encoding=LATIN1", connectionCount: 1, now: { Date() })
            let settings = try await database.read {
                try $0.queryOne("SELECT current_database() AS name, current_setting('application_name') AS app, current_setting('client_encoding') AS encoding")
            }
            #expect(settings?["name"] == .text(name))
            #expect(settings?["app"] == .text("node-7"))
            #expect(settings?["encoding"] == .text("UTF8"))
            await database.close()
        }
    }

    /// A node on the database's host connects through PostgreSQL's Unix socket (README: cheaper
    /// than loopback TCP per round trip); the URL is libpq's, with the socket's folder as `host`.
    @Test func connectsThroughTheServersUnixSocket() async throws {
        let cluster = try TestPostgres.shared()
        try await cluster.withDatabase { url in
            let name = try #require(url.split(separator: "/").last?.split(separator: "?").first.map(String.init))
            let socketURL = "postgres://\(TestPostgres.user)@/\(name)?host=\(cluster.folder)&port=\(cluster.port)"
            let database = try PostgresDatabase(url: socketURL, connectionCount: 1, now: { Date() })
            let written = try await database.write { executor in
                try executor.execute("CREATE TABLE cell (t TEXT NOT NULL)")
                try executor.execute("INSERT INTO cell (t) VALUES (?)", "over the socket")
                // No server address: the session is not a TCP one.
                return try executor.queryOne("SELECT t, inet_server_addr() IS NULL AS local FROM cell")
            }
            #expect(written?["t"] == .text("over the socket"))
            #expect(written?["local"] == .integer(1))
            await database.close()
        }
    }

    @Test func valuesRoundTripThroughTypedColumns() async throws {
        try await withDatabase(.postgres) { database in
            let inserted = try await database.write { executor in
                try executor.execute("CREATE TABLE cell (id INTEGER PRIMARY KEY AUTOINCREMENT, i INTEGER, r REAL, t TEXT, b BLOB) STRICT")
                return try executor.queryOne("INSERT INTO cell (i, r, t, b) VALUES (?, ?, ?, ?) RETURNING *",
                                             .integer(Int64.min), .real(-1e300), .text("héllo wörld 🌍 日本 'quoted' ?"), .blob([0, 1, 2, 254, 255]))
            }
            let row = try #require(inserted)
            #expect(row["id"] == .integer(1))
            #expect(row["i"] == .integer(Int64.min))
            #expect(row["r"] == .real(-1e300))
            #expect(row["t"] == .text("héllo wörld 🌍 日本 'quoted' ?"))
            #expect(row["b"] == .blob([0, 1, 2, 254, 255]))
            let empty = try await database.write { executor in
                try executor.queryOne("INSERT INTO cell (i, r, t, b) VALUES (?, ?, ?, ?) RETURNING i, r, t, b", nil, .real(0.25), .text(""), .blob([]))
            }
            #expect(empty?.values == [.null, .real(0.25), .text(""), .blob([])])
        }
    }

    @Test func largeBlobRoundTrips() async throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(1024 * 1024 + 7)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try await withDatabase(.postgres) { database in
            let back = try await database.write { executor in
                try executor.execute("CREATE TABLE cell (b BLOB NOT NULL)")
                return try executor.queryOne("INSERT INTO cell (b) VALUES (?) RETURNING b", .blob(bytes))?.bytes("b")
            }
            #expect(back == bytes)
        }
    }

    @Test func textWithNulIsRejectedNotTruncated() async throws {
        try await withDatabase(.postgres) { database in
            try await database.write { try $0.execute("CREATE TABLE cell (t TEXT)") }
            let error = await thrownStorageError {
                try await database.write { try $0.execute("INSERT INTO cell (t) VALUES (?)", .text("nul\u{0}inside")) }
            }
            #expect(error?.code == .typeMismatch)
            #expect(error?.message.contains("nul") == false)
        }
    }

    @Test func insertOrIgnoreBecomesOnConflictDoNothing() async throws {
        try await withDatabase(.postgres) { database in
            let changes = try await database.write { executor in
                try executor.execute("CREATE TABLE seen (jti TEXT PRIMARY KEY) WITHOUT ROWID")
                let first = try executor.execute("INSERT OR IGNORE INTO seen (jti) VALUES (?)", "abc")
                let second = try executor.execute("INSERT OR IGNORE INTO seen (jti) VALUES (?)", "abc")
                return [first, second]
            }
            #expect(changes == [1, 0])
        }
    }

    @Test func modulesMigrationShapesApply() async throws {
        try await withDatabase(.postgres) { database in
            try await database.migrate([
                Migration(module: "m", version: 1, name: "shapes", statements: [
                    "CREATE TABLE realms (id TEXT PRIMARY KEY, enabled INTEGER NOT NULL)",
                    """
                    CREATE TABLE accounts (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL UNIQUE,
                        realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                        deleted_email_hash BLOB,
                        created_at INTEGER NOT NULL
                    )
                    """,
                    "CREATE INDEX accounts_realm_seq ON accounts (realm_id, seq)",
                ]),
            ])
            let seqs = try await database.write { executor in
                try executor.execute("INSERT INTO realms (id, enabled) VALUES (?, ?)", "r", true)
                return try (1...2).map { n in
                    try executor.queryOne("INSERT INTO accounts (id, realm_id, created_at) VALUES (?, ?, ?) RETURNING seq",
                                          .text("a\(n)"), "r", .integer(Int64(Int32.max) + 5))?.int("seq")
                }
            }
            #expect(seqs == [1, 2])
        }
    }

    @Test func concurrentMigratorsApplyEachStepOnce() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let migrations = [
                Migration(module: "m", version: 1, name: "one", statements: ["CREATE TABLE t (v INTEGER)", "INSERT INTO t (v) VALUES (1)"]),
                Migration(module: "m", version: 2, name: "two", statements: ["INSERT INTO t (v) VALUES (2)"]),
            ]
            let nodes = try (0..<3).map { _ in try PostgresDatabase(url: url, connectionCount: 1, now: { Date() }) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for node in nodes { group.addTask { try await node.migrate(migrations) } }
                try await group.waitForAll()
            }
            let values = try await nodes[0].read { try $0.query("SELECT v FROM t ORDER BY v").map { try $0.int("v") } }
            #expect(values == [1, 2])
            for node in nodes { await node.close() }
        }
    }

    @Test func serializationFailureIsRetriedWithTheWholeBody() async throws {
        try await withDatabase(.postgres) { database in
            try await database.write { executor in
                try executor.execute("CREATE TABLE counter (n INTEGER NOT NULL)")
                try executor.execute("INSERT INTO counter (n) VALUES (0)")
            }
            let attempts = Mutex(0)
            let (inside, insideSignal) = AsyncStream<Void>.makeStream()
            let release = DispatchSemaphore(value: 0)
            // The first attempt reads, then waits while another write commits: its UPDATE then
            // fails with 40001 and the body runs again, seeing the other write.
            let first = Task {
                try await database.write { executor -> Int64 in
                    let attempt = attempts.withLock { $0 += 1; return $0 }
                    let n = try executor.queryOne("SELECT n FROM counter")?.int("n") ?? -100
                    if attempt == 1 {
                        insideSignal.yield()
                        release.wait()
                    }
                    try executor.execute("UPDATE counter SET n = ?", .integer(n + 1))
                    return n
                }
            }
            var iterator = inside.makeAsyncIterator()
            await iterator.next()
            do {
                try await database.write { try $0.execute("UPDATE counter SET n = n + 10") }
            } catch {
                release.signal()
                throw error
            }
            release.signal()
            let seen = try await first.value
            #expect(seen == 10)
            #expect(attempts.withLock { $0 } == 2)
            #expect((database as? PostgresDatabase)?.writeConflicts.total == 1, "the conflict is counted for /metrics")
            #expect(try await database.read { try $0.queryOne("SELECT n FROM counter")?.int("n") } == 11)
        }
    }

    @Test func restartedServerFailsOneCallAsUnavailableThenRecovers() async throws {
        let cluster = try TestPostgres()
        defer { cluster.stop() }  // Removes the database with the cluster.
        let url = try cluster.createDatabase().url
        let database = try PostgresDatabase(url: url, connectionCount: 1, now: { Date() })
        try await database.write { try $0.execute("CREATE TABLE t (v INTEGER)") }
        try cluster.stopServer()
        try cluster.start()
        // An idle connection from before the restart is re-opened transparently.
        try await database.write { try $0.execute("INSERT INTO t (v) VALUES (0)") }
        try cluster.stopServer()
        let down = await thrownStorageError { try await database.write { try $0.execute("INSERT INTO t (v) VALUES (1)") } }
        #expect(down?.code == .unavailable)
        #expect(down?.isTemporary == true)
        #expect(await !database.isReachable())
        try cluster.start()
        #expect(await database.isReachable())
        try await database.write { try $0.execute("INSERT INTO t (v) VALUES (2)") }
        #expect(try await database.read { try $0.query("SELECT v FROM t ORDER BY v").map { try $0.int("v") } } == [0, 2])
        await database.close()
    }

    @Test("a transaction whose session the server ends before COMMIT (a switchover's admin shutdown) runs again on a new connection and commits once")
    func transactionLostBeforeCommitRunsAgain() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let database = try PostgresDatabase(url: url, connectionCount: 1, now: { Date() })
            try await database.write { try $0.execute("CREATE TABLE t (v INTEGER)") }
            let attempts = Atomic<Int>(0)
            try await database.write { db in
                try db.execute("INSERT INTO t (v) VALUES (1)")
                if attempts.add(1, ordering: .relaxed).newValue == 1 {
                    // What `patronictl switchover` does to every session of the old primary (57P01).
                    _ = try db.query("SELECT pg_terminate_backend(pg_backend_pid())")
                }
            }
            #expect(attempts.load(ordering: .relaxed) == 2)
            #expect(try await database.read { try $0.query("SELECT v FROM t").map { try $0.int("v") } } == [1])
            #expect(database.connectionLosses.rerunTransactions == 1)
            #expect(database.connectionLosses.unknownCommitOutcomes == 0)
            await database.close()
        }
    }

    @Test func isReachableUntilClosedThenCallsFail() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let database = try PostgresDatabase(url: url, connectionCount: 2, now: { Date() })
            #expect(await database.isReachable())
            await database.close()
            #expect(await !database.isReachable())
            let error = await thrownStorageError { try await database.write { try $0.execute("SELECT 1") } }
            #expect(error?.code == .other)
            await database.close()  // A second close does nothing.
        }
    }

    @Test func poolUsageCountsLentConnectionsAndWaits() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let database = try PostgresDatabase(url: url, connectionCount: 1, now: { Date() })
            #expect(database.connectionPool == PostgresPoolUsage(size: 1, inUse: 0, waits: 0))
            // The holder keeps the one connection (blocking its queue, not a Swift thread) until
            // the second read has been seen waiting.
            let release = DispatchSemaphore(value: 0)
            let holder = Task { try await database.read { _ in release.wait() } }
            try await waitUntil { database.connectionPool.inUse == 1 }
            let waiter = Task { try await database.read { try $0.queryOne("SELECT 1 AS one")?.int("one") } }
            try await waitUntil { database.connectionPool.waits == 1 }
            #expect(database.connectionPool.inUse == 1)
            release.signal()
            try await holder.value
            #expect(try await waiter.value == 1)
            #expect(database.connectionPool == PostgresPoolUsage(size: 1, inUse: 0, waits: 1))
            await database.close()
        }
    }

    @Test func callersBeyondThePoolWaitForAConnection() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let database = try PostgresDatabase(url: url, connectionCount: 1, now: { Date() })
            let sum = try await withThrowingTaskGroup(of: Int64.self) { group in
                for n in 1...20 {
                    group.addTask { try await database.read { try $0.queryOne("SELECT ? AS n", .integer(Int64(n)))?.int("n") ?? 0 } }
                }
                return try await group.reduce(0, +)
            }
            #expect(sum == 210)
            await database.close()
        }
    }

    @Test func caughtConstraintErrorLeavesTheWriteUsable() async throws {
        try await withDatabase(.postgres) { database in
            let count = try await database.write { executor -> Int64 in
                try executor.execute("CREATE TABLE person (email TEXT PRIMARY KEY)")
                try executor.execute("INSERT INTO person (email) VALUES (?)", "a@example.com")
                #expect(thrownCode { try executor.execute("INSERT INTO person (email) VALUES (?)", "a@example.com") } == .uniqueViolation)
                try executor.execute("INSERT INTO person (email) VALUES (?)", "b@example.com")
                return try executor.queryOne("SELECT count(*) AS c FROM person")?.int("c") ?? -1
            }
            #expect(count == 2)
        }
    }

    @Test func writeTransactionSendsNoSavepointOnTheSuccessPath() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let connection = try PostgresConnection(url: url)
            _ = try connection.transaction(.readCommitted) { try $0.execute("CREATE TABLE t (v INTEGER PRIMARY KEY)") }
            let before = connection.roundTrips
            try connection.transaction(.readCommitted) { executor in
                for value in 1...3 { try executor.execute("INSERT INTO t (v) VALUES (?)", .integer(Int64(value))) }
                _ = try executor.withSavepoint("part") { try executor.execute("UPDATE t SET v = v + 10 WHERE v = 3") }
            }
            // BEGIN with the first INSERT (and its preparation), two more, the UPDATE (prepared in
            // the same round trip), COMMIT: no SAVEPOINT/RELEASE pairs.
            #expect(connection.roundTrips - before == 5)
            let values = try connection.transaction(.readOnlySnapshot) { try $0.query("SELECT v FROM t ORDER BY v").map { try $0.int("v") } }
            #expect(values == [1, 2, 13])
            connection.close()
        }
    }

    @Test func deferredReadSeesTheWritesBeforeItAndTravelsWithCommit() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let connection = try PostgresConnection(url: url)
            _ = try connection.transaction(.readCommitted) { try $0.execute("CREATE TABLE t (v INTEGER PRIMARY KEY)") }
            let before = connection.roundTrips
            let read = try connection.transaction(.readCommitted) { executor in
                for value in 1...2 { try executor.executeDeferred("INSERT INTO t (v) VALUES (?)", .integer(Int64(value))) }
                let read = try executor.queryDeferred("SELECT v FROM t ORDER BY v", [])
                // Not run yet: it goes with COMMIT.
                #expect(throws: StorageError.self) { try read.rows() }
                return read
            }
            #expect(connection.roundTrips - before == 1)  // BEGIN, the INSERTs, the read and COMMIT, pipelined
            #expect(try read.rows().map { try $0.int("v") } == [1, 2])
            connection.close()
        }
    }

    @Test func deferredWritesTravelWithCommitInOneRoundTrip() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let connection = try PostgresConnection(url: url)
            _ = try connection.transaction(.readCommitted) { try $0.execute("CREATE TABLE t (v INTEGER PRIMARY KEY)") }
            var before = connection.roundTrips
            try connection.transaction(.readCommitted) { executor in
                for value in 1...3 { try executor.executeDeferred("INSERT INTO t (v) VALUES (?)", .integer(Int64(value))) }
            }
            #expect(connection.roundTrips - before == 1)  // BEGIN, the INSERTs and COMMIT, pipelined
            // A deferred write that fails fails the transaction, at COMMIT: nothing of it stays.
            before = connection.roundTrips
            #expect(throws: StorageError.self) {
                try connection.transaction(.readCommitted) { executor in
                    try executor.executeDeferred("INSERT INTO t (v) VALUES (?)", .integer(4))
                    try executor.executeDeferred("INSERT INTO t (v) VALUES (?)", .integer(1))
                }
            }
            // A statement the body runs after deferred writes sees them.
            let seen = try connection.transaction(.readCommitted) { executor -> Int64 in
                try executor.executeDeferred("INSERT INTO t (v) VALUES (?)", .integer(5))
                return try executor.queryOne("SELECT count(*) AS c FROM t")?.int("c") ?? -1
            }
            #expect(seen == 4)
            // A deferred write never sent (the body threw) leaves its statement unprepared, and
            // the next transaction prepares it instead of running a statement that does not exist.
            #expect(throws: CancellationError.self) {
                try connection.transaction(.readCommitted) { executor in
                    try executor.executeDeferred("INSERT INTO t (v) VALUES (? + 100)", .integer(6))
                    throw CancellationError()
                }
            }
            try connection.transaction(.readCommitted) { try $0.executeDeferred("INSERT INTO t (v) VALUES (? + 100)", .integer(7)) }
            let values = try connection.transaction(.readOnlySnapshot) { try $0.query("SELECT v FROM t ORDER BY v").map { try $0.int("v") } }
            #expect(values == [1, 2, 3, 5, 107])
            connection.close()
        }
    }

    @Test func databaseCountsTheRoundTripsOfEveryConnection() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let database = try PostgresDatabase(url: url, connectionCount: 2, now: { Date() })
            try await database.write { try $0.execute("CREATE TABLE t (v INTEGER)") }
            let before = database.roundTrips.total
            try await withThrowingTaskGroup(of: Void.self) { group in
                for value in 1...4 {
                    group.addTask {
                        try await database.write { try $0.executeDeferred("INSERT INTO t (v) VALUES (?)", .integer(Int64(value))) }
                    }
                }
                try await group.waitForAll()
            }
            // Each write: BEGIN, its INSERT and COMMIT in one pipeline.
            #expect(database.roundTrips.total - before == 4)
            await database.close()
        }
    }

    @Test func readOnlyTransactionWaitsForOneRoundTrip() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let connection = try PostgresConnection(url: url)
            _ = try connection.transaction(.readCommitted) { try $0.execute("CREATE TABLE t (v INTEGER)") }
            for value in 1...3 {
                let before = connection.roundTrips
                // BEGIN with the SELECT; the COMMIT is sent without waiting, its answer read by
                // the next command.
                let count = try connection.transaction(.readOnlySnapshot) { try $0.queryOne("SELECT count(*) AS c FROM t")?.int("c") }
                #expect(connection.roundTrips - before == 1)
                #expect(count == Int64(value - 1))
                _ = try connection.transaction(.readCommitted) { try $0.execute("INSERT INTO t (v) VALUES (?)", .integer(Int64(value))) }
            }
            // The snapshot ended with the COMMIT: a read sees every write committed since.
            #expect(try connection.transaction(.readOnlySnapshot) { try $0.queryOne("SELECT count(*) AS c FROM t")?.int("c") } == 3)
            connection.close()
        }
    }

    @Test func batchOfStatementsIsOneRoundTrip() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let connection = try PostgresConnection(url: url)
            _ = try connection.transaction(.readCommitted) { executor in
                try executor.execute("CREATE TABLE t (v INTEGER PRIMARY KEY, used INTEGER)")
                try executor.execute("INSERT INTO t (v) VALUES (1), (2)")
            }
            let before = connection.roundTrips
            let answers = try connection.transaction(.readCommitted) { executor in
                try executor.queryBatch([
                    ("UPDATE t SET used = 1 WHERE v = ? AND used IS NULL RETURNING v", [.integer(1)]),
                    ("UPDATE t SET used = 1 WHERE v = ? AND used IS NULL RETURNING v", [.integer(3)]),
                    ("SELECT count(*) AS c FROM t WHERE used = 1", []),
                ])
            }
            // BEGIN and the three statements (two preparations) in one round trip, then COMMIT;
            // each statement sees the ones before it.
            #expect(connection.roundTrips - before == 2)
            #expect(answers.map(\.count) == [1, 0, 1])
            #expect(try answers[2].first?.int("c") == 1)
            connection.close()
        }
    }

    @Test func failureNeedingASavepointReplaysTheBodyGuarded() async throws {
        try await TestPostgres.shared().withDatabase { url in
            let connection = try PostgresConnection(url: url)
            _ = try connection.transaction(.readCommitted) { try $0.execute("CREATE TABLE t (v INTEGER PRIMARY KEY)") }
            var runs = 0
            let outcome = try connection.transaction(.readCommitted) { executor -> String in
                runs += 1
                try executor.execute("INSERT INTO t (v) VALUES (1)")
                do {
                    try executor.withSavepoint("refusable") {
                        try executor.execute("INSERT INTO t (v) VALUES (2)")
                        throw CancellationError()  // a refusal decided after a write
                    }
                } catch is CancellationError {
                    return "refused"
                }
                return "done"
            }
            // The optimistic run could not undo its INSERT of 2 alone: it was rolled back and the
            // body ran again with a real savepoint, keeping 1 and undoing 2, as on SQLite.
            #expect(outcome == "refused")
            #expect(runs == 2)
            let values = try connection.transaction(.readOnlySnapshot) { try $0.query("SELECT v FROM t").map { try $0.int("v") } }
            #expect(values == [1])
            connection.close()
        }
    }

    @Test func swallowedFailureOfAReadQueryFailsTheWriteInsteadOfCommitting() async throws {
        try await withDatabase(.postgres) { database in
            try await database.write { try $0.execute("CREATE TABLE t (v INTEGER)") }
            let error = await thrownStorageError {
                try await database.write { executor in
                    try executor.execute("INSERT INTO t (v) VALUES (1)")
                    _ = try? executor.query("SELECT no_such_column FROM t")
                }
            }
            #expect(error?.code == .other)
            #expect(try await database.read { try $0.queryOne("SELECT count(*) AS c FROM t")?.int("c") } == 0)
        }
    }

    @Test func connectionLostInsideABodyIsNotReopenedUntilTheTransactionEnds() async throws {
        try await withDatabase(.postgres) { database in
            try await database.write { try $0.execute("CREATE TABLE t (v INTEGER)") }
            let error = await thrownStorageError {
                try await database.write { executor in
                    _ = try? executor.query("SELECT pg_terminate_backend(pg_backend_pid())")
                    // Must fail: on a re-opened connection it would commit on its own.
                    try executor.execute("INSERT INTO t (v) VALUES (1)")
                }
            }
            #expect(error?.code == .unavailable)
            #expect(try await database.read { try $0.queryOne("SELECT count(*) AS c FROM t")?.int("c") } == 0)
            #expect(await database.isReachable())
        }
    }

    @Test func unreachableServerFailsAsUnavailableWithoutThePassword() throws {
        let error = #expect(throws: StorageError.self) {
            try PostgresDatabase(url: "postgres://herald:s3cret-pw@127.0.0.1:1/none?connect_timeout=2", connectionCount: 1, now: { Date() })
        }
        #expect(error?.code == .unavailable)
        #expect(error.map { !$0.description.contains("s3cret-pw") } == true)
    }

    @Test func errorsMapFromSQLState() {
        #expect(StorageError.code(forSQLState: "23505") == .uniqueViolation)
        #expect(StorageError.code(forSQLState: "23503") == .foreignKeyViolation)
        #expect(StorageError.code(forSQLState: "23502") == .constraint)
        #expect(StorageError.code(forSQLState: "23514") == .constraint)
        #expect(StorageError.code(forSQLState: "40001") == .busy)
        #expect(StorageError.code(forSQLState: "40P01") == .busy)
        #expect(StorageError.code(forSQLState: "08006") == .unavailable)
        #expect(StorageError.code(forSQLState: "57P01") == .unavailable)
        #expect(StorageError.code(forSQLState: "53300") == .unavailable)
        #expect(StorageError.code(forSQLState: "53100") == .io)   // disk full: not a passing outage
        #expect(StorageError.code(forSQLState: "42703") == .missingColumn)
        #expect(StorageError.code(forSQLState: "22P02") == .typeMismatch)
        #expect(StorageError.code(forSQLState: "42601") == .other)
        #expect(StorageError.packed("23505") == 2 | 3 << 6 | 5 << 12 | 0 << 18 | 5 << 24)  // as MAKE_SQLSTATE
    }
}

@Suite("PostgreSQL dialect")
struct PostgresDialectTests {
    private func translated(_ sql: String) throws -> String { try PostgresDialect.translate(sql).sql }

    @Test func placeholdersAreNumberedOutsideLiteralsAndComments() throws {
        let translation = try PostgresDialect.translate("SELECT '?', \"a?\" FROM t WHERE a = ? AND b = ? -- ?\n AND c = ? /* ? */")
        #expect(translation.sql == "SELECT '?', \"a?\" FROM t WHERE a = $1 AND b = $2 -- ?\n AND c = $3 /* ? */")
        #expect(translation.parameterCount == 3)
        #expect(try translated("SELECT 'it''s ?' , ?") == "SELECT 'it''s ?' , $1")
    }

    @Test func sqliteTypesAndTableOptionsAreRewritten() throws {
        #expect(try translated("CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, n integer NOT NULL, b BLOB, r REAL) STRICT, WITHOUT ROWID")
                == "CREATE TABLE a (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY , n BIGINT NOT NULL, b BYTEA, r DOUBLE PRECISION)")
        #expect(try translated("CREATE TABLE b (id INTEGER PRIMARY KEY, note TEXT DEFAULT 'INTEGER BLOB')")
                == "CREATE TABLE b (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, note TEXT DEFAULT 'INTEGER BLOB')")
        #expect(try translated("CREATE TABLE c (a TEXT, b TEXT, PRIMARY KEY (a, b)) STRICT;") == "CREATE TABLE c (a TEXT, b TEXT, PRIMARY KEY (a, b))")
    }

    @Test func insertOrIgnoreIsRewrittenBeforeReturning() throws {
        #expect(try translated("INSERT OR IGNORE INTO t (a) VALUES (?)") == "INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING")
        #expect(try translated("insert or ignore into t (a) values (?) returning a") == "insert into t (a) values ($1) ON CONFLICT DO NOTHING returning a")
    }

    @Test func unsupportedShapesAreRejected() {
        #expect(thrownCode { try translated("INSERT OR REPLACE INTO t VALUES (1)") } == .unsupported)
        #expect(thrownCode { try translated("REPLACE INTO t VALUES (1)") } == .unsupported)
        #expect(thrownCode { try translated("CREATE TABLE a (x INTEGER); DROP TABLE a") } == .unsupported)
    }

    @Test func dollarQuotedBodiesAreCopiedVerbatim() throws {
        let function = "CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN DELETE FROM t WHERE x = 'INTEGER?'; RETURN NULL; END $$"
        #expect(try translated(function) == function)
        #expect(try translated("SELECT $body$ a; b ? $$ $body$, ? , $tag_1$?$tag_1$") == "SELECT $body$ a; b ? $$ $body$, $1 , $tag_1$?$tag_1$")
        // Not quotes: a positional parameter, an identifier with a dollar sign.
        #expect(try translated("SELECT $1, a$b$ FROM t WHERE c = ?") == "SELECT $1, a$b$ FROM t WHERE c = $1")
        #expect(thrownCode { try translated("SELECT $$ a $$; DROP TABLE a") } == .unsupported)
    }

    @Test func byteaHexDecodes() {
        #expect(PostgresConnection.decodeHexBytea("\\x00ff10Ab") == [0, 255, 16, 171])
        #expect(PostgresConnection.decodeHexBytea("\\x") == [])
    }
}

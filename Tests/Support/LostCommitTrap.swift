import Foundation
import Storage

/// Makes the next transaction that inserts into a table lose the answer to its COMMIT, as a
/// failover or a switchover does, on a database of the shared test cluster (issue #36 item 2).
///
/// - `.committed`: the transaction asks for `synchronous_commit = on`, so its COMMIT, already
///   durable locally, waits for the synchronous standby the test cluster names and which never
///   connects (`TestPostgres.start`); the trap then terminates that session. PostgreSQL keeps
///   the commit and ends the connection without answering, exactly what a client of a primary
///   stopped for a switchover sees.
/// - `.notCommitted`: a deferred trigger terminates the session inside its COMMIT, before the
///   commit record: the client sees the same lost connection, and nothing was committed.
///
/// Only the first such transaction after `arm` is trapped (a sequence counts them, outside
/// any transaction), so a retry of it goes through.
public final class LostCommitTrap: Sendable {
    public enum Outcome: Sendable {
        case committed, notCommitted
    }

    private let database: PostgresDatabase
    private let watcher: Task<Int, any Error>?

    /// Installs the trap on `table` of `target`.
    public static func arm(_ outcome: Outcome, onInsertInto table: String, of target: TestPostgresDatabase) async throws
        -> LostCommitTrap {
        let database = try PostgresDatabase(url: target.url, connectionCount: 1, now: { Date() })
        let action = switch outcome {
        case .committed: "PERFORM set_config('synchronous_commit', 'on', true);"
        case .notCommitted: "PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(30);"
        }
        try await target.runSQL("""
            CREATE SEQUENCE herald_test_trap_\(table);
            CREATE FUNCTION herald_test_trap_\(table)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF nextval('herald_test_trap_\(table)') = 1 THEN \(action) END IF;
                RETURN NULL;
            END $$;
            CREATE CONSTRAINT TRIGGER herald_test_trap AFTER INSERT ON \(table)
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION herald_test_trap_\(table)();
            """)
        return LostCommitTrap(database: database, watcher: outcome == .committed ? Task { try await terminateWaiter(database) } : nil)
    }

    private init(database: PostgresDatabase, watcher: Task<Int, any Error>?) {
        self.database = database
        self.watcher = watcher
    }

    /// Ends the session whose COMMIT waits for the absent standby, once one does (within 60 s).
    private static func terminateWaiter(_ database: PostgresDatabase) async throws -> Int {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let ended = try await database.read { db in
                try db.query("""
                    SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
                    WHERE wait_event = 'SyncRep' AND datname = current_database()
                    """).count
            }
            if ended > 0 { return ended }
            try await Task.sleep(for: .milliseconds(5))
        }
        return 0
    }

    /// How many sessions the trap ended while they waited in COMMIT (`.committed` only; waits
    /// for that to happen), then closes the trap's connection. The trigger stays, disarmed.
    @discardableResult
    public func finish() async throws -> Int {
        let ended = try await watcher?.value ?? 0
        await database.close()
        return ended
    }
}

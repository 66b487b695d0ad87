import Foundation
import HeraldTestSupport
import Synchronization
import Testing
@testable import Storage

/// Issue #36 item 2: a write whose connection is lost after its COMMIT was sent (a failover, a
/// switchover) is resolved exactly: answered with what it committed, or run again when it did
/// not commit, by reading rows only that attempt wrote; never answered as unknown when it can
/// be known.
@Suite("PostgreSQL: lost COMMIT answers")
struct LostCommitTests {
    /// One attempt's row: a random value only it writes.
    private static func insertMark(_ db: any SQLExecutor, attempts: borrowing Atomic<Int>) throws -> String {
        attempts.add(1, ordering: .relaxed)
        let mark = UUID().uuidString
        try db.executeDeferred("INSERT INTO marks (mark) VALUES (?)", .text(mark))
        return mark
    }

    private static func marks(_ database: PostgresDatabase) async throws -> [String] {
        try await database.read { try $0.query("SELECT mark FROM marks").map { try $0.string("mark") } }
    }

    private static let check: LostCommitCheck<String> = { mark, db in
        try db.queryOne("SELECT 1 AS found FROM marks WHERE mark = ?", .text(mark)) != nil
    }

    private static func withMarks(_ body: (PostgresDatabase, TestPostgresDatabase) async throws -> Void) async throws {
        let target = try TestPostgres.shared().createDatabase()
        let database = try PostgresDatabase(url: target.url, connectionCount: 1, now: { Date() })
        do {
            try await database.write { try $0.execute("CREATE TABLE marks (mark TEXT PRIMARY KEY)") }
            try await body(database, target)
        } catch {
            await database.close()
            await target.drop()
            throw error
        }
        await database.close()
        await target.drop()
    }

    @Test("a lost COMMIT is resolved: found committed, the body's value is returned without running it again; not, the body runs again",
          arguments: [LostCommitTrap.Outcome.committed, .notCommitted])
    func lostCommitIsResolved(_ outcome: LostCommitTrap.Outcome) async throws {
        try await Self.withMarks { database, target in
            let trap = try await LostCommitTrap.arm(outcome, onInsertInto: "marks", of: target)
            let attempts = Atomic<Int>(0)
            let mark = try await database.write(isolation: .readCommitted, lostCommitCheck: Self.check) {
                try Self.insertMark($0, attempts: attempts)
            }
            try await trap.finish()
            // Exactly what the answer names was committed, once.
            #expect(try await Self.marks(database) == [mark])
            let losses = database.connectionLosses
            #expect(losses.unknownCommitOutcomes == 0)
            switch outcome {
            case .committed:
                #expect(attempts.load(ordering: .relaxed) == 1)
                #expect(losses.lostCommitsFoundCommitted == 1 && losses.rerunTransactions == 0)
            case .notCommitted:
                #expect(attempts.load(ordering: .relaxed) == 2)
                #expect(losses.lostCommitsFoundNotCommitted == 1 && losses.rerunTransactions == 1)
            }
        }
    }

    @Test("a read deferred to the lost COMMIT is answered after the commit is found: the value is whole")
    func deferredReadOfALostCommitIsAnswered() async throws {
        try await Self.withMarks { database, target in
            let trap = try await LostCommitTrap.arm(.committed, onInsertInto: "marks", of: target)
            let attempts = Atomic<Int>(0)
            let (mark, read) = try await database.write(isolation: .readCommitted, lostCommitCheck: { try Self.check($0.0, $1) }) { db in
                (try Self.insertMark(db, attempts: attempts), try db.queryDeferred("SELECT mark FROM marks", []))
            }
            #expect(try await trap.finish() == 1)
            #expect(try read.rows().map { try $0.string("mark") } == [mark])
            #expect(database.connectionLosses.lostCommitsFoundCommitted == 1)
        }
    }

    @Test("a write without a check still fails as unavailable when its COMMIT's answer is lost: the outcome is unknown")
    func withoutACheckTheOutcomeIsUnknown() async throws {
        try await Self.withMarks { database, target in
            let trap = try await LostCommitTrap.arm(.committed, onInsertInto: "marks", of: target)
            let attempts = Atomic<Int>(0)
            let error = await #expect(throws: StorageError.self) {
                try await database.write(isolation: .readCommitted) { try Self.insertMark($0, attempts: attempts) }
            }
            #expect(error?.code == .unavailable)
            #expect(try await trap.finish() == 1)
            // It did commit: what the check exists to find out.
            #expect(try await Self.marks(database).count == 1)
            #expect(attempts.load(ordering: .relaxed) == 1)
            #expect(database.connectionLosses.unknownCommitOutcomes == 1)
        }
    }
}

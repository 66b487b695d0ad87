import Foundation
import HeraldTestSupport
import Storage
import Testing
@testable import Realms

/// The event table's own mechanics: the purge by oldest ids and the rebuild without
/// AUTOINCREMENT (what the events record is `SecurityEventTests`, end to end).
@Suite struct SecurityEventLogTests {
    private static let day: Int64 = 86_400
    private static let start: Int64 = 1_700_000_000

    @Test("the purge deletes every event before the cutoff, over several batches, and keeps the rest",
          arguments: Backend.allCases)
    func purgeDeletesOldEventsInBatches(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let old = SecurityEventLog.purgeBatchSize * 2 + 7
            try await Self.record(test, at: Array(repeating: Self.start, count: old) + [Self.start + 2 * Self.day])
            let log = SecurityEventLog(database: test.database)
            #expect(try await log.purge(before: Self.start + Self.day) == old)
            let left = try await log.list(realmID: "acme").items
            #expect(left.map(\.at) == [Self.start + 2 * Self.day])
            #expect(try await log.purge(before: Self.start + Self.day) == 0)
        }
    }

    @Test("an event stamped earlier than one recorded before it goes once it is among the oldest ids",
          arguments: Backend.allCases)
    func purgeFollowsTheOrderEventsWereRecordedIn(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            // Two nodes' clocks: the second event is stamped before the first; both are old, and
            // a third is new.
            try await Self.record(test, at: [Self.start + 10, Self.start, Self.start + 3 * Self.day])
            let log = SecurityEventLog(database: test.database)
            #expect(try await log.purge(before: Self.start + Self.day) == 2)
            #expect(try await log.list(realmID: "acme").items.map(\.at) == [Self.start + 3 * Self.day])
        }
    }

    @Test("the rebuild without AUTOINCREMENT keeps every event and its id; new ids continue above them",
          arguments: Backend.allCases)
    func rebuildKeepsEventsAndIDs(backend: Backend) async throws {
        // The schema as version 2 of the events left it, with events the code of then wrote.
        let before = RealmsSchema.migrations.filter { $0.module != "security_events" || $0.version <= 2 }
        let fresh = try await FreshDatabase(backend, migrations: before)
        let realms = RealmStore(database: fresh.database, now: { Date(timeIntervalSince1970: 1_700_000_000) })
        _ = try await realms.create(id: "acme", context: admin)
        try await fresh.database.write { db in
            for at in [Self.start, Self.start + 1, Self.start + 2] {
                try SecurityEventLog.record(db, NewSecurityEvent(realmID: "acme", type: .loginSucceeded, at: at,
                                                                 reason: "existing", accountID: "acct-\(at)"))
            }
        }
        let log = SecurityEventLog(database: fresh.database)
        let stored = try await log.list(realmID: "acme").items

        try await fresh.database.migrate(RealmsSchema.migrations)
        #expect(try await log.list(realmID: "acme").items == stored)
        try await fresh.database.write { db in
            try SecurityEventLog.record(db, NewSecurityEvent(realmID: "acme", type: .loginFailed, at: Self.start + 3))
        }
        let after = try await log.list(realmID: "acme").items
        #expect(after.count == 4)
        #expect(after[0].id > stored.map(\.id).max() ?? .max)
        #expect(Array(after.dropFirst()) == stored)

        let indexes = try await fresh.database.read { db in
            switch backend {
            case .sqlite:
                try db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'security_events'")
            case .postgres:
                try db.query("SELECT indexname AS name FROM pg_indexes WHERE tablename = 'security_events'")
            }
        }.map { try $0.string("name") }
        #expect(!indexes.contains("security_events_at"))
        #expect(indexes.contains("security_events_realm") && indexes.contains("security_events_realm_type"))
        if backend == .sqlite {
            let (schema, sequences) = try await fresh.database.read { db in
                (try db.queryOne("SELECT sql FROM sqlite_master WHERE name = 'security_events'")?.string("sql") ?? "",
                 try db.query("SELECT name FROM sqlite_sequence WHERE name = 'security_events'").count)
            }
            #expect(!schema.contains("AUTOINCREMENT"))
            #expect(sequences == 0)
            // The realm's deletion still takes its events (the rebuilt table kept the cascade).
            try await realms.delete("acme", context: admin)
            #expect(try await fresh.database.read { db in try db.query("SELECT id FROM security_events") }.isEmpty)
        }
        await fresh.close()
    }

    /// Records one login-failure event of `acme` per stamp, in this order, in one transaction.
    private static func record(_ test: TestDatabase, at stamps: [Int64]) async throws {
        try await test.database.write { db in
            for at in stamps {
                try SecurityEventLog.record(db, NewSecurityEvent(realmID: "acme", type: .loginFailed, at: at))
            }
        }
    }
}

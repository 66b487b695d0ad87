import HeraldTestSupport
import Storage
import Testing
@testable import TokenIssuer

/// The purge's indexes on the ends of sessions are partial (a session starts with neither a
/// revocation nor, usually, an idle deadline, and a login should not pay index entries for
/// NULLs), which is only right while the planner still finds each end through its index.
@Suite("Ended-session purge plan")
struct EndedSessionPurgePlanTests {
    @Test("each end of a session is searched through its own index, the table never scanned")
    func purgeUsesTheEndIndexes() async throws {
        let fixture = try await TokenFixture(.sqlite)
        let plan = try await fixture.database.read { db in
            try db.query("EXPLAIN QUERY PLAN " + EndedSessionPurge.deleteSQL, [.integer(1), .integer(1), .integer(1), .integer(1)])
        }.map { try $0.string("detail") }
        for index in ["sessions_expires", "sessions_revoked", "sessions_idle_expires"] {
            #expect(plan.contains { $0.contains("USING INDEX \(index)") }, "\(index) unused: \(plan)")
        }
        #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
    }
}

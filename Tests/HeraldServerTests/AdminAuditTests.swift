import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("Admin API: audit log")
struct AdminAuditTests {
    @Test("each change is recorded with time, actor, action, target, reason and a diff", arguments: Backend.allCases)
    func entries(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["accessTokenTTL": 600], reason: "ticket SEC-12")
            let audit = try await herald.admin("GET", "/api/admin/audit")
            #expect(audit.status == 200)
            let entry = try #require(audit.items.first)
            #expect(entry["actor"] == "env")
            #expect(entry["action"] == "realm.update")
            #expect(entry["target"] == "realms/acme")
            #expect(entry["reason"] == "ticket SEC-12")
            #expect(entry["changes"] == ["accessTokenTTL": ["before": 900, "after": 600]])
            #expect((entry["at"]?.doubleValue ?? 0) > 1_600_000_000)
            #expect(entry["id"]?.doubleValue != nil)
            #expect(audit.items.count == 2)
        }
    }

    @Test("a change reason over 500 characters or with control characters is 400, and nothing changes", arguments: Backend.allCases)
    func reasonBounded(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let long = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false],
                                        reason: String(repeating: "r", count: 501))
            #expect(long.status == 400)
            #expect(long.fieldProblems["X-Change-Reason"] != nil)
            #expect(try await herald.admin("GET", "/api/admin/realms/acme").json["enabled"] == true)
        }
    }

    @Test("the audit list pages and filters", arguments: Backend.allCases)
    func pagingAndFilters(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            for id in ["r1", "r2", "r3"] { try await herald.createRealm(id) }
            let first = try await herald.admin("GET", "/api/admin/audit?limit=2")
            #expect(first.items.compactMap { $0["target"]?.stringValue } == ["realms/r3", "realms/r2"])
            let cursor = try #require(first.json["nextCursor"]?.stringValue)
            let second = try await herald.admin("GET", "/api/admin/audit?limit=2&cursor=\(cursor)")
            #expect(second.items.compactMap { $0["target"]?.stringValue } == ["realms/r1"])
            #expect(second.json["nextCursor"] == .null)
            #expect(try await herald.admin("GET", "/api/admin/audit?realm=r2").items.count == 1)
            #expect(try await herald.admin("GET", "/api/admin/audit?actor=someone-else").items.isEmpty)
            #expect(try await herald.admin("GET", "/api/admin/audit?limit=-1").status == 400)
        }
    }
}

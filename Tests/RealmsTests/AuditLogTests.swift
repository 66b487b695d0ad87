import HeraldTestSupport
import Testing
@testable import Realms

@Suite("Audit log")
struct AuditLogTests {
    @Test("entries are listed newest first in pages, with filters", arguments: Backend.allCases)
    func pagingAndFilters(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            for id in ["r1", "r2", "r3"] {
                _ = try await test.realms.create(id: id, context: admin)
                test.clock.advance(by: 1)
            }
            let bob = try ChangeContext(actor: "bob", reason: "rename")
            _ = try await test.realms.update("r2", changes: RealmChanges(displayName: "Two"), context: bob)

            let first = try await test.audit.list(page: PageRequest(limit: 3))
            #expect(first.items.map(\.target) == ["realms/r2", "realms/r3", "realms/r2"])
            let second = try await test.audit.list(page: PageRequest(limit: 3, cursor: first.nextCursor))
            #expect(second.items.map(\.target) == ["realms/r1"])
            #expect(second.nextCursor == nil)

            #expect(try await test.audit.list(filter: AuditFilter(actor: "bob")).items.map(\.reason) == ["rename"])
            #expect(try await test.audit.list(filter: AuditFilter(realmID: "r2")).items.map(\.action)
                == ["realm.update", "realm.create"])
            #expect(try await test.audit.list(filter: AuditFilter(action: "realm.create")).items.count == 3)
            #expect(try await test.audit.list(filter: AuditFilter(target: "realms/r1")).items.count == 1)
        }
    }

    @Test("the diff redacts secret-named keys at any depth")
    func diffRedacts() {
        struct Shape: Encodable {
            let name: String
            let clientSecret: String
            let nested: [String: String]
        }
        let changes = AuditDiff.changes(before: nil, after: Shape(name: "n", clientSecret: "s3cret",
                                                                  nested: ["privateKey": "pem"]))
        #expect(changes["clientSecret"]?.after == .string("[redacted]"))
        #expect(changes["nested"]?.after == .object(["privateKey": .string("[redacted]")]))
        #expect(changes["name"]?.after == .string("n"))
    }

    @Test("an unchanged field is left out of an update's diff")
    func diffOnlyChanges() {
        let before = RateLimit(failuresPerWindow: 20, windowSeconds: 300)
        let after = RateLimit(failuresPerWindow: 20, windowSeconds: 600)
        #expect(AuditDiff.changes(before: before, after: after)
            == ["windowSeconds": FieldChange(before: .number(300), after: .number(600))])
    }
}

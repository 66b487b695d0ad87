import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Testing
@testable import HeraldServer

@Suite("Admin API: accounts")
struct AdminAccountTests {
    @Test("accounts are listed with filters and cursor paging", arguments: Backend.allCases)
    func listing(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            var ids: [String] = []
            for index in 0..<5 {
                let account = try await herald.accounts.create(
                    realmID: "acme", NewAccount(email: "user\(index)@example.com", status: index == 4 ? .disabled : .active))
                ids.append(account.id)
            }
            _ = try await herald.accounts.link(realmID: "acme", provider: "apple", openID: "001.a", accountID: ids[1], email: nil)

            var seen: [String] = []
            var path = "/api/admin/realms/acme/accounts?limit=2"
            while true {
                let page = try await herald.admin("GET", path)
                #expect(page.status == 200)
                seen += page.items.compactMap { $0["id"]?.stringValue }
                guard let cursor = page.json["nextCursor"]?.stringValue else { break }
                path = "/api/admin/realms/acme/accounts?limit=2&cursor=\(cursor)"
            }
            #expect(seen == ids)

            let byEmail = try await herald.admin("GET", "/api/admin/realms/acme/accounts?email=USER2%40example.com")
            #expect(byEmail.items.compactMap { $0["id"]?.stringValue } == [ids[2]])
            let disabled = try await herald.admin("GET", "/api/admin/realms/acme/accounts?status=disabled")
            #expect(disabled.items.compactMap { $0["id"]?.stringValue } == [ids[4]])
            let apple = try await herald.admin("GET", "/api/admin/realms/acme/accounts?provider=apple")
            #expect(apple.items.compactMap { $0["id"]?.stringValue } == [ids[1]])

            let bad = try await herald.admin("GET", "/api/admin/realms/acme/accounts?status=gone&limit=500")
            #expect(bad.status == 400)
            #expect(Set(bad.fieldProblems.keys) == ["status", "limit"])
            let badCursor = try await herald.admin("GET", "/api/admin/realms/acme/accounts?cursor=xyz")
            #expect(badCursor.status == 400)
            #expect(Set(badCursor.fieldProblems.keys) == ["cursor"])
            #expect(try await herald.admin("GET", "/api/admin/realms/nope/accounts").status == 404)
        }
    }

    @Test("an account reads with its identities; disabling and deleting go through PATCH and DELETE", arguments: Backend.allCases)
    func lifecycle(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let account = try await herald.accounts.create(realmID: "acme", NewAccount(email: "jane@example.com", emailVerified: true))
            _ = try await herald.accounts.link(realmID: "acme", provider: "apple", openID: "001.jane", accountID: account.id,
                                               email: "jane@example.com")
            let read = try await herald.admin("GET", "/api/admin/realms/acme/accounts/\(account.id)")
            #expect(read.status == 200)
            #expect(read.json["email"] == "jane@example.com")
            #expect(read.json["identities"]?.arrayValue?.first?["provider"] == "apple")
            #expect(read.json["identities"]?.arrayValue?.first?["openId"] == "001.jane")

            let disabled = try await herald.admin("PATCH", "/api/admin/realms/acme/accounts/\(account.id)",
                                            json: ["status": "disabled", "name": ["givenName": "Jane"]], reason: "abuse report")
            #expect(disabled.status == 200)
            #expect(disabled.json["status"] == "disabled")
            #expect(disabled.json["name"]?["givenName"] == "Jane")

            let refused = try await herald.admin("PATCH", "/api/admin/realms/acme/accounts/\(account.id)",
                                           json: ["status": "deleted", "name": ["nickname": "J"]])
            #expect(refused.status == 400)
            #expect(Set(refused.fieldProblems.keys) == ["status", "name.nickname"])

            #expect(try await herald.admin("DELETE", "/api/admin/realms/acme/accounts/\(account.id)", reason: "GDPR erasure").status == 204)
            let deleted = try await herald.admin("GET", "/api/admin/realms/acme/accounts/\(account.id)")
            #expect(deleted.json["status"] == "deleted")
            #expect(deleted.json["email"] == .string("deleted+\(account.id)@deleted.invalid"))
            #expect(deleted.json["identities"] == [])
            #expect(try await herald.admin("PATCH", "/api/admin/realms/acme/accounts/\(account.id)", json: ["status": "active"]).status
                == 409)

            let audit = try await herald.admin("GET", "/api/admin/audit?realm=acme")
            #expect(!audit.text.contains("jane@example.com"))
            #expect(audit.items.first?["reason"] == "GDPR erasure")
        }
    }

    @Test("unknown accounts and over-long ids are 404", arguments: Backend.allCases)
    func missing(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            try await herald.createRealm("acme")
            let long = String(repeating: "a", count: 300)
            for path in ["/api/admin/realms/acme/accounts/nope", "/api/admin/realms/acme/accounts/\(long)",
                         "/api/admin/realms/nope/accounts/nope"] {
                #expect(try await herald.admin("GET", path).status == 404)
                #expect(try await herald.admin("DELETE", path).status == 404)
                #expect(try await herald.admin("PATCH", path, json: ["status": "active"]).status == 404)
            }
        }
    }
}

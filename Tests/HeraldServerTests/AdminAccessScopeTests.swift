import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Storage
import TokenIssuer
import Testing
@testable import HeraldServer

/// The scope and role rules of admin tokens, on every route of the admin route table: a route
/// added to `AdminRoutes.routes` is covered without touching these tests.
@Suite("Admin token scope and role")
struct AdminAccessScopeTests {
    /// The admin route table of a running server (only the declarations are read).
    static func routeTable(_ herald: RunningHerald) -> [AdminRoute] {
        AdminRoutes.routes(AdminStores(herald.application.services))
    }

    /// `route`'s path with `:realm` set to `realm` and every other parameter to `x`.
    static func path(_ route: AdminRoute, realm: String) -> String {
        route.template.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            switch segment {
            case ":realm": realm
            case let other where other.hasPrefix(":"): "x"
            default: String(segment)
            }
        }.joined(separator: "/")
    }

    /// Calls `route` with `token`, a JSON body `{}` on writes.
    static func call(_ herald: RunningHerald, _ route: AdminRoute, realm: String,
                     token: String) async throws -> TestHTTPClient.Response {
        try await herald.admin(route.method, path(route, realm: realm), json: route.writes ? .object([:]) : nil, token: token)
    }

    /// A 403 or a 404 that the scope or role rules produce (a realm's 404, or any 403).
    static func isScopeRefusal(_ response: TestHTTPClient.Response) -> Bool {
        response.status == 403 || (response.status == 404 && response.json["message"]?.stringValue == "Realm not found")
    }

    static func token(_ herald: RunningHerald, _ name: String, role: AdminRole = .admin,
                      scope: AdminScope = .allRealms) async throws -> String {
        try await AdminTokenStore(database: herald.application.services.database, now: herald.application.services.now)
            .create(name: name, role: role, scope: scope, context: ChangeContext(actor: "test"))
    }

    @Test("the route table declares writes by method and the realm by the :realm segment")
    func declarations() async throws {
        try await RunningHerald.with { herald throws in
            let routes = Self.routeTable(herald)
            #expect(routes.count >= 27)
            for route in routes {
                #expect(route.writes == !["GET", "HEAD"].contains(route.method), "\(route.method) \(route.template)")
                #expect((route.realmParameter != nil) == route.template.contains("/:realm"), "\(route.template)")
            }
            let global = routes.filter { $0.reach == .allRealmsOnly }.map { "\($0.method) \($0.template)" }
            #expect(Set(global) == ["POST /api/admin/realms", "DELETE /api/admin/realms/:realm", "GET /api/admin/tokens",
                                    "POST /api/admin/tokens", "DELETE /api/admin/tokens/:name"])
        }
    }

    @Test("every admin route: a viewer's write is 403, a token of another realm gets 404, an admin of all realms is not refused")
    func everyRouteFollowsScopeAndRole() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("alpha")
            try await herald.createRealm("beta")
            let viewer = try await Self.token(herald, "viewer-all", role: .viewer)
            let betaAdmin = try await Self.token(herald, "beta-admin", scope: .realms(["beta"]))
            let betaViewer = try await Self.token(herald, "beta-viewer", role: .viewer, scope: .realms(["beta"]))
            let root = try await Self.token(herald, "root")
            let routes = Self.routeTable(herald)
            var refusals = 0
            for (index, route) in routes.enumerated() {
                let label = "\(route.method) \(route.template)"
                // A viewer of all realms: every write refused by role, every read let through.
                let viewed = try await Self.call(herald, route, realm: "alpha", token: viewer)
                if route.writes {
                    #expect(viewed.status == 403 && viewed.json["code"]?.stringValue == "forbidden", "viewer: \(label)")
                    refusals += 1
                } else {
                    #expect(!Self.isScopeRefusal(viewed), "viewer: \(label) → \(viewed.status) \(viewed.text)")
                }
                // Tokens of realm beta on realm alpha: 404 like an unknown realm, for admins and
                // viewers alike (a viewer's write must not tell that the realm exists).
                for token in [betaAdmin, betaViewer] {
                    let outside = try await Self.call(herald, route, realm: "alpha", token: token)
                    if route.realmParameter != nil {
                        #expect(outside.status == 404 && outside.json["message"]?.stringValue == "Realm not found",
                                "beta token: \(label) → \(outside.status)")
                        refusals += 1
                    } else if route.reach == .allRealmsOnly {
                        #expect(outside.status == 403 && outside.json["code"]?.stringValue == "forbidden", "beta token: \(label)")
                        refusals += 1
                    } else {
                        #expect(outside.status == 200, "beta token: \(label) → \(outside.status)")
                    }
                }
                // An admin of all realms, on a realm of its own (deletes may take it away).
                let realm = "all-\(index)"
                try await herald.createRealm(realm)
                let allowed = try await Self.call(herald, route, realm: realm, token: root)
                #expect(!Self.isScopeRefusal(allowed), "root: \(label) → \(allowed.status) \(allowed.text)")
                // A realm-scoped admin in its own realm: refused only where all realms are needed.
                if route.realmParameter != nil {
                    let scopedRealm = "own-\(index)"
                    try await herald.createRealm(scopedRealm)
                    let own = try await Self.token(herald, "own-\(index)", scope: .realms([scopedRealm]))
                    let inside = try await Self.call(herald, route, realm: scopedRealm, token: own)
                    if route.reach == .allRealmsOnly {
                        #expect(inside.status == 403, "own realm: \(label) → \(inside.status)")
                        refusals += 1
                    } else {
                        #expect(!Self.isScopeRefusal(inside), "own realm: \(label) → \(inside.status) \(inside.text)")
                    }
                }
            }
            // The refused calls changed nothing: alpha is still there with its settings.
            #expect(try await herald.admin("GET", "/api/admin/realms/alpha").status == 200)
            // Every refusal is in the audit log, under the token's name.
            let denied = try await herald.admin("GET", "/api/admin/audit?action=admin.denied&limit=200")
            var count = denied.items.count
            var cursor = denied.json["nextCursor"]?.stringValue
            while let next = cursor {
                let page = try await herald.admin("GET", "/api/admin/audit?action=admin.denied&limit=200&cursor=\(next)")
                count += page.items.count
                cursor = page.json["nextCursor"]?.stringValue
            }
            #expect(refusals > routes.count)
            #expect(count == refusals)
        }
    }

    @Test("the realm list and the audit list show only a scoped token's realms")
    func listsAreFiltered() async throws {
        try await RunningHerald.with { herald throws in
            for id in ["alpha", "beta", "gamma"] { try await herald.createRealm(id) }
            let scoped = try await Self.token(herald, "ops", role: .viewer, scope: .realms(["beta", "gamma"]))
            let realms = try await herald.admin("GET", "/api/admin/realms", token: scoped)
            #expect(realms.items.compactMap { $0["id"]?.stringValue } == ["beta", "gamma"])
            // Paging walks only the scope too.
            let first = try await herald.admin("GET", "/api/admin/realms?limit=1", token: scoped)
            #expect(first.items.compactMap { $0["id"]?.stringValue } == ["beta"])
            let cursor = try #require(first.json["nextCursor"]?.stringValue)
            let second = try await herald.admin("GET", "/api/admin/realms?limit=1&cursor=\(cursor)", token: scoped)
            #expect(second.items.compactMap { $0["id"]?.stringValue } == ["gamma"])
            #expect(second.json["nextCursor"] == .null)

            let everything = try await herald.admin("GET", "/api/admin/audit?limit=200")
            let allTargets = everything.items.compactMap { $0["target"]?.stringValue }
            #expect(allTargets.contains("realms/alpha") && allTargets.contains("admin-tokens/ops"))
            let audit = try await herald.admin("GET", "/api/admin/audit?limit=200", token: scoped)
            let targets = audit.items.compactMap { $0["target"]?.stringValue }
            #expect(Set(targets) == ["realms/beta", "realms/gamma"])
            // Asking for a realm outside the scope finds nothing rather than its entries.
            let other = try await herald.admin("GET", "/api/admin/audit?realm=alpha", token: scoped)
            #expect(other.status == 200 && other.items.isEmpty)
        }
    }

    @Test("HEAD on an admin GET route is a read: a viewer gets 200 without a body and is not refused as a writer")
    func headIsARead() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("acme")
            let viewer = try await Self.token(herald, "viewer-head", role: .viewer)
            let get = try await herald.admin("GET", "/api/admin/realms/acme", token: viewer)
            let head = try await herald.admin("HEAD", "/api/admin/realms/acme", token: viewer)
            #expect(get.status == 200 && head.status == 200, "\(head.status)")
            #expect(head.body.isEmpty && head.header("Content-Length") == String(get.body.count))
            let refused = try await herald.admin("HEAD", "/api/admin/realms/acme", token: "hadm_not-a-token")
            #expect(refused.status == 401)
            let audit = try await herald.admin("GET", "/api/admin/audit?action=admin.denied")
            #expect(audit.items.isEmpty, "a viewer's HEAD is not a refused write")
        }
    }

    @Test("a refusal is audited with the token's name, the path and why, and no secret")
    func refusalIsAudited() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("acme")
            let viewer = try await Self.token(herald, "support", role: .viewer)
            let refused = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false],
                                                 reason: "just looking", token: viewer)
            #expect(refused.status == 403)
            #expect(refused.json["code"]?.stringValue == "forbidden")
            #expect(!refused.text.contains(viewer))
            #expect(try await herald.admin("GET", "/api/admin/realms/acme").json["enabled"] == .bool(true))
            let audit = try await herald.admin("GET", "/api/admin/audit?action=admin.denied")
            let entry = try #require(audit.items.first)
            #expect(audit.items.count == 1)
            #expect(entry["actor"]?.stringValue == "support")
            #expect(entry["target"]?.stringValue == "/api/admin/realms/acme")
            // Issue #38 item 7: a refused caller's free text is never stored.
            #expect(entry["reason"] == .null)
            #expect(!audit.text.contains("just looking"))
            #expect(entry["changes"]?["reason"]?["after"]?.stringValue == "read_only_role")
            #expect(entry["changes"]?["method"]?["after"]?.stringValue == "PATCH")
            // Filed under the realm, so the realm's own admins see the attempt.
            let acme = try await Self.token(herald, "acme-admin", scope: .realms(["acme"]))
            let theirs = try await herald.admin("GET", "/api/admin/audit?action=admin.denied", token: acme)
            #expect(theirs.items.count == 1)
            let logs = herald.logs.captured.joined(separator: "\n")
            #expect(logs.contains("admin_denied"))
            #expect(!logs.contains(viewer) && !audit.text.contains(viewer))
        }
    }

    /// One token's refusals sent in parallel are each audited and counted, and none makes
    /// another run again: on PostgreSQL no write conflicts (`herald_postgres_write_conflicts_total`).
    @Test("parallel refusals of one token are all audited without a write conflict")
    func parallelRefusalsAreAuditedWithoutConflicts() async throws {
        try await RunningHerald.with(backend: .postgres) { herald throws in
            try await herald.createRealm("acme")
            let viewer = try await Self.token(herald, "support", role: .viewer)
            let postgres = try #require(herald.application.services.database as? PostgresDatabase)
            let before = postgres.writeConflicts.total
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false], token: viewer).status
                    }
                }
                for try await status in group { #expect(status == 403) }
            }
            #expect(postgres.writeConflicts.total - before == 0)
            let audit = try await herald.admin("GET", "/api/admin/audit?action=admin.denied&limit=200")
            #expect(audit.items.count == 32)
        }
    }

    /// Issue #38 item 7: a viewer of realm alpha filled beta's audit with `admin.denied` rows
    /// carrying its own `X-Change-Reason`.
    @Test("a refusal is filed under the route's realm only when the token sees it and it exists, never with the caller's reason")
    func refusalIsFiledOnlyUnderAVisibleRealm() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("alpha")
            try await herald.createRealm("beta")
            let alphaViewer = try await Self.token(herald, "alpha-viewer", role: .viewer, scope: .realms(["alpha"]))
            let betaAdmin = try await Self.token(herald, "beta-admin", scope: .realms(["beta"]))
            let alphaAdmin = try await Self.token(herald, "alpha-admin", scope: .realms(["alpha"]))
            let viewerOfAll = try await Self.token(herald, "viewer-of-all", role: .viewer)
            let outside = try await herald.admin("PATCH", "/api/admin/realms/beta", json: ["enabled": false],
                                                 reason: "planted in beta", token: alphaViewer)
            #expect(outside.status == 404 && outside.json["message"]?.stringValue == "Realm not found")
            let inside = try await herald.admin("PATCH", "/api/admin/realms/alpha", json: ["enabled": false],
                                                reason: "planted in alpha", token: alphaViewer)
            #expect(inside.status == 403 && inside.json["code"]?.stringValue == "forbidden")
            // A realm that does not exist yet, refused to a viewer of all realms, then created.
            let future = try await herald.admin("PATCH", "/api/admin/realms/gamma", json: ["enabled": false],
                                                reason: "planted in gamma", token: viewerOfAll)
            #expect(future.status == 403)
            try await herald.createRealm("gamma")
            let gammaAdmin = try await Self.token(herald, "gamma-admin", scope: .realms(["gamma"]))

            let betaSees = try await herald.admin("GET", "/api/admin/audit?action=admin.denied", token: betaAdmin)
            #expect(betaSees.status == 200 && betaSees.items.isEmpty, "\(betaSees.text)")
            let gammaSees = try await herald.admin("GET", "/api/admin/audit?action=admin.denied", token: gammaAdmin)
            #expect(gammaSees.status == 200 && gammaSees.items.isEmpty, "\(gammaSees.text)")
            // The realm the token may see keeps its refusals, so alpha's admins see the attempt.
            let alphaSees = try await herald.admin("GET", "/api/admin/audit?action=admin.denied", token: alphaAdmin)
            #expect(alphaSees.items.compactMap { $0["target"]?.stringValue } == ["/api/admin/realms/alpha"])
            // All-realms tokens see every refusal; none carries the caller's text.
            let all = try await herald.admin("GET", "/api/admin/audit?action=admin.denied")
            #expect(Set(all.items.compactMap { $0["target"]?.stringValue })
                == ["/api/admin/realms/alpha", "/api/admin/realms/beta", "/api/admin/realms/gamma"])
            #expect(all.items.allSatisfy { $0["reason"] == .null })
            #expect(!all.text.contains("planted"))
        }
    }

    @Test("refusals are audited up to the bound per token and window; past it they are answered the same and only logged")
    func refusalAuditIsBoundedPerToken() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))  // the start of a window
        try await RunningHerald.with(now: clock.closure) { herald throws in
            try await herald.createRealm("acme")
            let viewer = try await Self.token(herald, "looping-viewer", role: .viewer)
            let other = try await Self.token(herald, "other-viewer", role: .viewer)
            let bound = AdminAccessPolicy.auditedDenials.requests
            var answers: Set<String> = []
            for _ in 0..<(bound + 5) {
                let refused = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false], token: viewer)
                answers.insert("\(refused.status) \(refused.json["code"]?.stringValue ?? "") \(refused.json["message"]?.stringValue ?? "")")
            }
            #expect(answers == ["403 forbidden This admin token may only read"])
            func audited(_ actor: String) async throws -> Int {
                var count = 0
                var cursor: String?
                repeat {
                    let page = try await herald.admin("GET", "/api/admin/audit?action=admin.denied&actor=\(actor)&limit=200"
                                                      + (cursor.map { "&cursor=\($0)" } ?? ""))
                    count += page.items.count
                    cursor = page.json["nextCursor"]?.stringValue
                } while cursor != nil
                return count
            }
            #expect(try await audited("looping-viewer") == bound)
            let logs = herald.logs.captured
            #expect(logs.filter { $0.contains("\"admin_denied\"") && $0.contains("looping-viewer") }.count == bound + 5)
            #expect(logs.filter { $0.contains("admin_denied_audit_skipped") && $0.contains("looping-viewer") }.count == 5)
            // Another token's budget is its own, and the next window audits again.
            #expect(try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false], token: other).status == 403)
            #expect(try await audited("other-viewer") == 1)
            clock.advance(by: TimeInterval(AdminAccessPolicy.auditedDenials.windowSeconds))
            #expect(try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false], token: viewer).status == 403)
            #expect(try await audited("looping-viewer") == bound + 1)
            #expect(try await herald.admin("GET", "/api/admin/realms/acme").json["enabled"] == .bool(true))
        }
    }

    /// Issue #38 item 8: a realm deleted and created again under its id showed the old tenant's
    /// audit entries and reasons to a token scoped to the new realm.
    @Test("a realm created again under a deleted realm's id shows its scoped tokens none of the old audit")
    func recreatedRealmStartsWithAnEmptyAudit() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("acme")
            let changed = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["displayName": "Old tenant"],
                                                 reason: "old tenant's private reason")
            #expect(changed.status == 200)
            #expect(try await herald.admin("DELETE", "/api/admin/realms/acme", reason: "tenant left").status == 204)
            try await herald.createRealm("acme")
            let scoped = try await Self.token(herald, "new-acme-admin", scope: .realms(["acme"]))
            let theirs = try await herald.admin("GET", "/api/admin/audit?limit=200", token: scoped)
            #expect(theirs.status == 200)
            #expect(theirs.items.compactMap { $0["action"]?.stringValue } == ["realm.create"], "\(theirs.text)")
            #expect(!theirs.text.contains("old tenant") && !theirs.text.contains("tenant left"))
            let filtered = try await herald.admin("GET", "/api/admin/audit?realm=acme&limit=200", token: scoped)
            #expect(filtered.items.count == 1)
            // All-realms tokens keep the whole history; the targets still name the realm.
            let all = try await herald.admin("GET", "/api/admin/audit?target=realms/acme&limit=200")
            #expect(all.items.compactMap { $0["action"]?.stringValue } == ["realm.create", "realm.delete", "realm.update", "realm.create"])
            #expect(all.text.contains("old tenant's private reason") && all.text.contains("tenant left"))
        }
    }

    @Test("tokens through the API: created once with their secret, scoped, listed without it, revoked")
    func tokenAPI() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("acme")
            try await herald.createRealm("other")
            let created = try await herald.admin("POST", "/api/admin/tokens",
                                                 json: ["name": "acme-support", "role": "viewer", "realms": ["acme"]],
                                                 reason: "support desk")
            #expect(created.status == 201)
            #expect(created.header("Cache-Control") == "no-store")
            let secret = try #require(created.json["token"]?.stringValue)
            #expect(secret.hasPrefix("hadm_"))
            #expect(created.json["role"]?.stringValue == "viewer")
            #expect(created.json["allRealms"] == .bool(false))
            #expect(created.json["realms"] == .array([.string("acme")]))
            // The new token is what it says: reads acme, cannot see other, cannot write.
            #expect(try await herald.admin("GET", "/api/admin/realms/acme", token: secret).status == 200)
            #expect(try await herald.admin("GET", "/api/admin/realms/other", token: secret).status == 404)
            #expect(try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false], token: secret).status == 403)
            // Listed without any secret; the env token is an admin of all realms.
            let list = try await herald.admin("GET", "/api/admin/tokens")
            #expect(list.status == 200)
            #expect(!list.text.contains(secret) && list.items.allSatisfy { $0["token"] == nil })
            let byName = Dictionary(uniqueKeysWithValues: list.items.compactMap { item in item["name"]?.stringValue.map { ($0, item) } })
            #expect(byName["env"]?["role"]?.stringValue == "admin" && byName["env"]?["allRealms"] == .bool(true))
            #expect(byName["acme-support"]?["realms"] == .array([.string("acme")]))
            // A default token: admin of all realms.
            let plain = try await herald.admin("POST", "/api/admin/tokens", json: ["name": "deploy"])
            #expect(plain.json["role"]?.stringValue == "admin" && plain.json["allRealms"] == .bool(true))
            #expect(plain.json["realms"] == .array([]))
            // Revoked: it stops working at once.
            #expect(try await herald.admin("DELETE", "/api/admin/tokens/acme-support").status == 204)
            #expect(try await herald.admin("GET", "/api/admin/realms/acme", token: secret).status == 401)
            #expect(try await herald.admin("DELETE", "/api/admin/tokens/acme-support").status == 404)
            let audit = try await herald.admin("GET", "/api/admin/audit?target=admin-tokens/acme-support")
            #expect(audit.items.compactMap { $0["action"]?.stringValue } == ["admin-token.revoke", "admin-token.create"])
            #expect(!audit.text.contains(secret))
        }
    }

    @Test("bad token input is a 400 naming the field")
    func tokenAPIInput() async throws {
        try await RunningHerald.with { herald throws in
            try await herald.createRealm("acme")
            let cases: [(JSONValue, String)] = [
                (["role": "admin"], "name"),
                (["name": "x", "role": "root"], "role"),
                (["name": "x", "realms": []], "realms"),
                (["name": "x", "realms": ["no-such-realm"]], "realms"),
                (["name": "x", "realms": ["Not A Slug"]], "realms"),
                (["name": "x", "realms": "acme"], "realms"),
                (["name": "env"], "name"),
                (["name": "bad name"], "name"),
                (["name": "x", "scope": "all"], "scope"),
            ]
            for (body, field) in cases {
                let response = try await herald.admin("POST", "/api/admin/tokens", json: body)
                #expect(response.status == 400, "\(body)")
                #expect(response.json["code"]?.stringValue == "bad_request")
                #expect(response.fieldProblems[field] != nil, "\(body): \(response.text)")
            }
            #expect(try await herald.admin("POST", "/api/admin/tokens", json: ["name": "dup"]).status == 201)
            #expect(try await herald.admin("POST", "/api/admin/tokens", json: ["name": "dup"]).status == 409)
            #expect(try await herald.admin("DELETE", "/api/admin/tokens/env").status == 400)
            // Nothing but "dup" and env was created.
            let names = try await herald.admin("GET", "/api/admin/tokens").items.compactMap { $0["name"]?.stringValue }
            #expect(names == ["dup", "env"])
        }
    }
}

import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import Realms

@Suite("Realm store")
struct RealmStoreTests {
    @Test("a realm created from just an id has every default", arguments: Backend.allCases)
    func defaults(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let realm = try await test.realms.create(id: "acme", context: admin)
            #expect(realm.displayName == "acme")
            #expect(realm.enabled && realm.registrationEnabled && realm.nonceRequired)
            #expect(realm.emailLinking == .verified)
            #expect(realm.accessTokenTTL == 900)
            #expect(realm.refreshTokenTTL == 2_592_000)
            #expect(realm.loginUrl == nil)
            #expect(realm.signingAlgorithm == .es256)
            #expect(realm.rateLimit == RateLimit(failuresPerWindow: 20, windowSeconds: 300))
            #expect(realm.createdAt == 1_700_000_000)
            #expect(try await test.realms.realm("acme") == realm)
        }
    }

    @Test("creating a realm whose id exists is a conflict", arguments: Backend.allCases)
    func duplicateID(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let error = await realmsError { try await test.realms.create(id: "acme", context: admin) }
            #expect(error?.code == .conflict)
        }
    }

    @Test("every invalid field is named at once", arguments: Backend.allCases)
    func invalidFieldsNamed(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let changes = RealmChanges(displayName: "", accessTokenTTL: 5, loginUrl: "http://evil.example.com/",
                                       failuresPerWindow: 0, windowSeconds: 999_999)
            let error = await realmsError { try await test.realms.create(id: "Bad_Id", changes: changes, context: admin) }
            #expect(error?.code == .invalidInput)
            #expect(Set(error?.fieldIssues.map(\.field) ?? []) == [
                "id", "displayName", "accessTokenTTL", "loginUrl", "rateLimit.failuresPerWindow", "rateLimit.windowSeconds",
            ])
            #expect(try await test.realms.list().items.isEmpty)
        }
    }

    @Test("a refresh lifetime shorter than the access lifetime is refused", arguments: Backend.allCases)
    func refreshShorterThanAccess(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let error = await realmsError {
                try await test.realms.create(id: "acme", changes: RealmChanges(accessTokenTTL: 3600, refreshTokenTTL: 600),
                                             context: admin)
            }
            #expect(error?.fieldIssues.map(\.field) == ["refreshTokenTTL"])
        }
    }

    @Test("an update changes only the given fields and can clear the login URL", arguments: Backend.allCases)
    func update(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(
                id: "acme", changes: RealmChanges(loginUrl: "https://login.example.com/"), context: admin)
            test.clock.advance(by: 60)
            let updated = try await test.realms.update(
                "acme", changes: RealmChanges(displayName: "Acme", emailLinking: .never, loginUrl: .some(nil),
                                              signingAlgorithm: .rs256, windowSeconds: 600),
                context: admin)
            #expect(updated.displayName == "Acme")
            #expect(updated.emailLinking == .never)
            #expect(updated.loginUrl == nil)
            #expect(updated.signingAlgorithm == .rs256)
            #expect(updated.rateLimit == RateLimit(failuresPerWindow: 20, windowSeconds: 600))
            #expect(updated.updatedAt == updated.createdAt + 60)
            #expect(try await test.realms.realm("acme") == updated)
        }
    }

    @Test("a disabled realm is hidden from public lookups but not from admin reads", arguments: Backend.allCases)
    func enabledRealm(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", changes: RealmChanges(enabled: false), context: admin)
            #expect(try await test.realms.enabledRealm("acme") == nil)
            #expect(try await test.realms.realm("acme")?.enabled == false)
            _ = try await test.realms.update("acme", changes: RealmChanges(enabled: true), context: admin)
            #expect(try await test.realms.enabledRealm("acme")?.id == "acme")
            #expect(try await test.realms.enabledRealm("nope") == nil)
        }
    }

    @Test("updating or deleting an unknown realm is not found", arguments: Backend.allCases)
    func unknownRealm(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            #expect(await realmsError { try await test.realms.update("nope", changes: RealmChanges(), context: admin) }?
                .code == .notFound)
            #expect(await realmsError { try await test.realms.delete("nope", context: admin) }?.code == .notFound)
            #expect(try await test.realms.realm("nope") == nil)
            #expect(try await test.realms.realm("NOT A SLUG") == nil)
        }
    }

    @Test("realms are listed by id in pages joined by opaque cursors", arguments: Backend.allCases)
    func paging(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            for id in ["delta", "alpha", "echo", "charlie", "bravo"] {
                _ = try await test.realms.create(id: id, context: admin)
            }
            let first = try await test.realms.list(page: PageRequest(limit: 2))
            #expect(first.items.map(\.id) == ["alpha", "bravo"])
            let second = try await test.realms.list(page: PageRequest(limit: 2, cursor: first.nextCursor))
            #expect(second.items.map(\.id) == ["charlie", "delta"])
            let third = try await test.realms.list(page: PageRequest(limit: 2, cursor: second.nextCursor))
            #expect(third.items.map(\.id) == ["echo"])
            #expect(third.nextCursor == nil)
        }
    }

    @Test("a cursor from another list or garbage is refused naming the cursor", arguments: Backend.allCases)
    func badCursor(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            for cursor in ["garbage!", Base64URL.encode(Array("accounts:5".utf8))] {
                let error = await realmsError { try await test.realms.list(page: PageRequest(cursor: cursor)) }
                #expect(error?.fieldIssues.map(\.field) == ["cursor"])
            }
            #expect(throws: RealmsError.self) { try PageRequest(limit: 201) }
            #expect(throws: RealmsError.self) { try PageRequest(limit: 0) }
        }
    }

    @Test("a failing provisioning hook rolls the realm back", arguments: Backend.allCases)
    func provisioningIsAtomic(backend: Backend) async throws {
        struct ProvisioningFailed: Error {}
        try await TestDatabase.with(backend) { test throws in
            await #expect(throws: ProvisioningFailed.self) {
                try await test.realms.create(id: "acme", context: admin) { _, _ in throw ProvisioningFailed() }
            }
            #expect(try await test.realms.realm("acme") == nil)
            #expect(try await test.audit.list().items.isEmpty)
        }
    }

    @Test("deleting a realm removes its clients and accounts and is audited", arguments: Backend.allCases)
    func deleteCascades(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.clients.create(realmID: "acme", clientID: "web", changes: ClientAppChanges(name: "Web"),
                                              context: admin)
            _ = try await test.accounts.create(realmID: "acme", NewAccount(email: "a@example.com"))
            try await test.realms.delete("acme", context: admin)
            #expect(try await test.realms.realm("acme") == nil)
            #expect(try await test.rows("SELECT * FROM client_apps").isEmpty)
            #expect(try await test.rows("SELECT * FROM accounts").isEmpty)
            let entry = try #require(try await test.audit.list().items.first)
            #expect(entry.action == "realm.delete")
            #expect(entry.target == "realms/acme")
            #expect(entry.changes["id"] == FieldChange(before: .string("acme"), after: .null))
            // Issue #38 item 8: the realm's entries, the delete included, go under no realm, so
            // a realm created again under its id starts with an empty audit in its scope.
            #expect(try await test.audit.list(filter: AuditFilter(onlyRealmIDs: ["acme"])).items.isEmpty)
            #expect(try await test.audit.list(filter: AuditFilter(target: "realms/acme")).items.map(\.action)
                == ["realm.delete", "realm.create"])
        }
    }

    @Test("create and update are audited with actor, reason and a field diff", arguments: Backend.allCases)
    func audited(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let context = try ChangeContext(actor: "alice", reason: "longer sessions for ticket 42")
            _ = try await test.realms.update("acme", changes: RealmChanges(accessTokenTTL: 1800), context: context)
            let entries = try await test.audit.list().items
            #expect(entries.map(\.action) == ["realm.update", "realm.create"])
            let update = entries[0]
            #expect(update.actor == "alice")
            #expect(update.reason == "longer sessions for ticket 42")
            #expect(update.changes == ["accessTokenTTL": FieldChange(before: .number(900), after: .number(1800))])
            #expect(entries[1].changes["accessTokenTTL"] == FieldChange(before: .null, after: .number(900)))
            #expect(entries[1].changes["createdAt"] == nil)
        }
    }

    @Test("a deleted realm's security events go with it, without a realm foreign key on PostgreSQL", arguments: Backend.allCases)
    func deletionRemovesEvents(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.realms.create(id: "other", context: admin)
            for realm in ["acme", "other"] {
                try await test.database.write { db in
                    try SecurityEventLog.record(db, NewSecurityEvent(realmID: realm, type: .loginSucceeded, at: 1_700_000_000))
                }
            }
            try await test.realms.delete("acme", context: admin)
            _ = try await test.realms.create(id: "acme", context: admin)
            let events = SecurityEventLog(database: test.database)
            #expect(try await events.list(realmID: "acme").items.isEmpty)
            #expect(try await events.list(realmID: "other").items.count == 1)
            if backend == .postgres {
                // Logins insert events; a foreign key's check would lock the realm's row in each.
                let constraints = try await test.rows("""
                    SELECT conname FROM pg_constraint WHERE conrelid = 'security_events'::regclass AND contype = 'f'
                    """)
                #expect(constraints.isEmpty)
            }
        }
    }
}

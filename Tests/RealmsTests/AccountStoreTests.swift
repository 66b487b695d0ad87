import HeraldTestSupport
import JOSE
import Storage
import Synchronization
import Testing
@testable import Realms

/// Records which accounts had their sessions revoked.
final class RecordingRevoker: AccountSessionRevoker {
    let revoked = Mutex<[String]>([])

    func revokeSessions(realmID: String, accountID: String, in executor: any SQLExecutor) throws {
        revoked.withLock { $0.append("\(realmID)/\(accountID)") }
    }
}

/// A deletion hook that records its calls and reports a fixed label.
final class LabellingHook: AccountDeletionHook {
    let label: String
    let calls = Mutex<[String]>([])

    init(label: String) { self.label = label }

    func accountDeleted(realmID: String, accountID: String, at: Int64, in executor: any SQLExecutor) throws -> String {
        calls.withLock { $0.append("\(realmID)/\(accountID)") }
        return label
    }
}

@Suite("Account store")
struct AccountStoreTests {
    @Test("emails are unique per realm regardless of case, but may repeat across realms", arguments: Backend.allCases)
    func emailUniqueness(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.realms.create(id: "other", context: admin)
            let account = try await test.accounts.create(realmID: "acme", NewAccount(email: "Jane@Example.com", emailVerified: true))
            #expect(account.email == "jane@example.com")
            #expect(account.status == .active)
            #expect(Base64URL.decode(account.id)?.count == 16)
            let error = await realmsError { try await test.accounts.create(realmID: "acme", NewAccount(email: "jane@example.com")) }
            #expect(error?.code == .conflict)
            _ = try await test.accounts.create(realmID: "other", NewAccount(email: "jane@example.com"))
            #expect(try await test.accounts.account(realmID: "other", id: account.id) == nil)
        }
    }

    @Test("an identity links once per (realm, provider, subject)", arguments: Backend.allCases)
    func identityUnique(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let a = try await test.accounts.create(realmID: "acme", NewAccount(email: "a@example.com"))
            let b = try await test.accounts.create(realmID: "acme", NewAccount(email: "b@example.com"))
            _ = try await test.accounts.link(realmID: "acme", provider: "apple", openID: "001.sub", accountID: a.id,
                                             email: "A@Example.com")
            let error = await realmsError {
                try await test.accounts.link(realmID: "acme", provider: "apple", openID: "001.sub", accountID: b.id, email: nil)
            }
            #expect(error?.code == .conflict)
            let identities = try await test.accounts.identities(realmID: "acme", accountID: a.id)
            #expect(identities.map(\.openId) == ["001.sub"])
            #expect(identities.first?.email == "A@Example.com")
            let found = try await test.database.read { db in
                try AccountStore.load(db, realmID: "acme", provider: "apple", openID: "001.sub")
            }
            #expect(found?.id == a.id)
        }
    }

    @Test("accounts are filtered by email, status and provider", arguments: Backend.allCases)
    func filters(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let a = try await test.accounts.create(realmID: "acme", NewAccount(email: "a@example.com"))
            let b = try await test.accounts.create(realmID: "acme", NewAccount(email: "b@example.com"))
            _ = try await test.accounts.create(realmID: "acme", NewAccount(email: "c@example.com", status: .disabled))
            _ = try await test.accounts.link(realmID: "acme", provider: "apple", openID: "s1", accountID: b.id, email: nil)
            #expect(try await test.accounts.list(realmID: "acme", filter: AccountFilter(email: "A@EXAMPLE.COM")).items.map(\.id)
                == [a.id])
            #expect(try await test.accounts.list(realmID: "acme", filter: AccountFilter(status: .disabled)).items.map(\.email)
                == ["c@example.com"])
            #expect(try await test.accounts.list(realmID: "acme", filter: AccountFilter(provider: "apple")).items.map(\.id)
                == [b.id])
            #expect(try await test.accounts.list(realmID: "acme").items.count == 3)
        }
    }

    @Test("paging neither repeats nor skips accounts when others are inserted between pages", arguments: Backend.allCases)
    func pagingStableUnderInserts(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            var created: [String] = []
            for index in 0..<5 {
                created.append(try await test.accounts.create(realmID: "acme", NewAccount(email: "u\(index)@example.com")).id)
            }
            var seen: [String] = []
            var page = try await test.accounts.list(realmID: "acme", page: PageRequest(limit: 2))
            seen += page.items.map(\.id)
            // Inserted while the operator pages: same second, random ids, must come after.
            for index in 5..<8 {
                created.append(try await test.accounts.create(realmID: "acme", NewAccount(email: "u\(index)@example.com")).id)
            }
            while let cursor = page.nextCursor {
                page = try await test.accounts.list(realmID: "acme", page: PageRequest(limit: 2, cursor: cursor))
                seen += page.items.map(\.id)
            }
            #expect(seen == created)
        }
    }

    @Test("disabling an account revokes its sessions and is audited without the email", arguments: Backend.allCases)
    func disable(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let revoker = RecordingRevoker()
            let accounts = AccountStore(database: test.database, sessionRevoker: revoker, deletionHook: nil, now: test.clock.closure)
            _ = try await test.realms.create(id: "acme", context: admin)
            let account = try await accounts.create(realmID: "acme", NewAccount(email: "jane@example.com"))
            let disabled = try await accounts.update(realmID: "acme", id: account.id,
                                                     changes: AccountChanges(status: .disabled), context: admin)
            #expect(disabled.status == .disabled)
            #expect(revoker.revoked.withLock { $0 } == ["acme/\(account.id)"])
            _ = try await accounts.update(realmID: "acme", id: account.id, changes: AccountChanges(email: "jane2@example.com"),
                                          context: admin)
            let entries = try await test.audit.list(filter: AuditFilter(action: "account.update")).items
            #expect(entries.first?.changes["email"]?.before.stringValue?.hasPrefix("sha256:") == true)
            let raw = try await test.rows("SELECT changes FROM admin_audit").map { try $0.string("changes") }.joined()
            #expect(!raw.contains("jane"))
        }
    }

    @Test("status deleted cannot be set by update; an email taken by another account is a conflict", arguments: Backend.allCases)
    func updateRules(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let a = try await test.accounts.create(realmID: "acme", NewAccount(email: "a@example.com"))
            _ = try await test.accounts.create(realmID: "acme", NewAccount(email: "b@example.com"))
            #expect(await realmsError {
                try await test.accounts.update(realmID: "acme", id: a.id, changes: AccountChanges(status: .deleted), context: admin)
            }?.fieldIssues.map(\.field) == ["status"])
            #expect(await realmsError {
                try await test.accounts.update(realmID: "acme", id: a.id, changes: AccountChanges(email: "B@example.com"),
                                               context: admin)
            }?.code == .conflict)
            #expect(await realmsError {
                try await test.accounts.update(realmID: "acme", id: "missing", changes: AccountChanges(), context: admin)
            }?.code == .notFound)
        }
    }

    @Test("deleting an account frees its email, keeps only its hash, unlinks identities and revokes sessions", arguments: Backend.allCases)
    func delete(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let revoker = RecordingRevoker()
            let accounts = AccountStore(database: test.database, sessionRevoker: revoker, deletionHook: nil, now: test.clock.closure)
            _ = try await test.realms.create(id: "acme", context: admin)
            let account = try await accounts.create(
                realmID: "acme", NewAccount(email: "jane@example.com", emailVerified: true,
                                            name: PersonName(givenName: "Jane", familyName: "Doe"),
                                            pictureURL: "https://example.com/photo-of-her.png"))
            #expect(account.pictureURL == "https://example.com/photo-of-her.png")
            _ = try await accounts.link(realmID: "acme", provider: "apple", openID: "sub-1", accountID: account.id,
                                        email: "jane@example.com")
            try await accounts.delete(realmID: "acme", id: account.id, context: admin)

            let deleted = try #require(try await accounts.account(realmID: "acme", id: account.id))
            #expect(deleted.status == .deleted)
            #expect(deleted.email == "deleted+\(account.id)@deleted.invalid")
            #expect(deleted.name.isEmpty && !deleted.emailVerified && deleted.pictureURL == nil)
            #expect(try await accounts.identities(realmID: "acme", accountID: account.id).isEmpty)
            #expect(revoker.revoked.withLock { $0 } == ["acme/\(account.id)"])
            let hash = try await test.rows("SELECT deleted_email_hash FROM accounts WHERE id = ?", .text(account.id))
                .first?.optionalBytes("deleted_email_hash")
            #expect(hash == SHA256.hash("jane@example.com"))
            let raw = try await test.rows("SELECT changes FROM admin_audit").map { try $0.string("changes") }.joined()
            #expect(!raw.contains("jane") && !raw.contains("Jane") && !raw.contains("Doe") && !raw.contains("photo-of-her"))
            let audited = try #require(try await test.audit.list(filter: AuditFilter(action: "account.delete")).items.first)
            #expect(audited.changes["picture"] == FieldChange(before: .string(AuditDiff.redacted), after: .null))

            // The email is free again, and the deleted account cannot be edited.
            _ = try await accounts.create(realmID: "acme", NewAccount(email: "jane@example.com"))
            #expect(await realmsError {
                try await accounts.update(realmID: "acme", id: account.id, changes: AccountChanges(status: .active), context: admin)
            }?.code == .conflict)
            // Deleting again changes nothing.
            try await accounts.delete(realmID: "acme", id: account.id, context: admin)
            #expect(try await test.audit.list(filter: AuditFilter(action: "account.delete")).items.count == 1)
        }
    }

    @Test("the owner's delete runs the hook in its transaction, records account.deleted_by_user with the hook's label; a repeat answers that label",
          arguments: Backend.allCases)
    func deleteByOwner(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let hook = LabellingHook(label: "queued")
            let accounts = AccountStore(database: test.database, sessionRevoker: NoSessions(), deletionHook: hook,
                                        now: test.clock.closure)
            _ = try await test.realms.create(id: "acme", context: admin)
            let account = try await accounts.create(realmID: "acme", NewAccount(email: "owner@example.com"))
            let owner = AccountDeletionRequester.owner(sessionID: "sid-1", clientID: "ios-app", clientIP: "192.0.2.7")

            #expect(try await accounts.delete(realmID: "acme", id: account.id, by: owner)
                    == AccountDeletion(deletedNow: true, followUp: "queued"))
            #expect(hook.calls.withLock { $0 } == ["acme/\(account.id)"])
            let events = try await SecurityEventLog(database: test.database).list(realmID: "acme").items
            try #require(events.count == 1)
            #expect(events[0].type == .accountDeletedByUser && events[0].reason == "queued")
            #expect(events[0].sessionId == "sid-1" && events[0].clientId == "ios-app" && events[0].clientIp == "192.0.2.7")
            #expect(events[0].accountId == account.id && events[0].actor == nil)
            #expect(try await test.audit.list(filter: AuditFilter(action: "account.delete")).items.map(\.actor)
                    == [AccountStore.ownerActor])

            // Again (the owner's retry, or an admin): nothing runs or is recorded; the label is the first one's.
            #expect(try await accounts.delete(realmID: "acme", id: account.id, by: .admin(admin))
                    == AccountDeletion(deletedNow: false, followUp: "queued"))
            #expect(hook.calls.withLock { $0.count } == 1)
            #expect(try await SecurityEventLog(database: test.database).list(realmID: "acme").items.count == 1)
            #expect(await realmsError { try await accounts.delete(realmID: "acme", id: "nobody", by: owner) }?.code == .notFound)
        }
    }

    @Test("an account stored before pictures existed reads with none after the migration, and its next login fills it",
          arguments: Backend.allCases)
    func pictureMigrationKeepsExistingAccounts(backend: Backend) async throws {
        let before = RealmsSchema.migrations.filter { $0.module != "realms" || $0.version < 9 }
        #expect(before.count == RealmsSchema.migrations.count - 1)
        try await FreshDatabase.with(backend, migrations: before) { database in
            let clock = TestClock()
            _ = try await RealmStore(database: database, now: clock.closure).create(id: "acme", context: admin)
            try await database.write { db in
                try db.execute("""
                    INSERT INTO accounts (id, realm_id, email, email_verified, is_private_email, given_name, family_name,
                        display_name, status, created_at, updated_at)
                    VALUES ('old-account', 'acme', 'old@example.com', 1, 0, 'Old', NULL, NULL, 'active', 1, 1)
                    """)
                try db.execute("""
                    INSERT INTO identities (realm_id, provider, open_id, account_id, email, linked_at)
                    VALUES ('acme', 'google', 'g-old', 'old-account', 'old@example.com', 1)
                    """)
            }
            try await database.migrate(RealmsSchema.migrations)

            let accounts = AccountStore(database: database, sessionRevoker: NoSessions(), deletionHook: nil, now: clock.closure)
            let migrated = try #require(try await accounts.account(realmID: "acme", id: "old-account"))
            #expect(migrated.pictureURL == nil)
            #expect(migrated.name.givenName == "Old" && migrated.email == "old@example.com")
            #expect(try await accounts.list(realmID: "acme").items.map(\.pictureURL) == [nil])

            let realm = try #require(try await database.read { db in try RealmStore.load(db, id: "acme") })
            let claims = ProviderIdentityClaims(provider: "google", subject: "g-old", email: "old@example.com",
                                                emailVerified: true, isPrivateEmail: false,
                                                picture: "https://example.com/old.png")
            let resolution = try await database.write { db in
                try AccountResolver(now: clock.closure).resolve(db, realm: realm, claims: claims)
            }
            #expect(resolution.account.id == "old-account" && !resolution.isNewUser)
            #expect(try await accounts.account(realmID: "acme", id: "old-account")?.pictureURL == "https://example.com/old.png")
        }
    }

    @Test("account names are validated part by part", arguments: Backend.allCases)
    func nameValidation(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let a = try await test.accounts.create(realmID: "acme", NewAccount(email: "a@example.com"))
            let error = await realmsError {
                try await test.accounts.update(realmID: "acme", id: a.id,
                                               changes: AccountChanges(name: PersonName(givenName: "", familyName: "ok")),
                                               context: admin)
            }
            #expect(error?.fieldIssues.map(\.field) == ["name.givenName"])
            let named = try await test.accounts.update(realmID: "acme", id: a.id,
                                                       changes: AccountChanges(name: PersonName(displayName: "Al")),
                                                       context: admin)
            #expect(named.name.formatted == "Al")
            #expect(await realmsError {
                try await test.accounts.create(realmID: "acme", NewAccount(email: "p@example.com",
                                                                          pictureURL: "http://example.com/p.png"))
            }?.fieldIssues.map(\.field) == ["picture"])
        }
    }
}

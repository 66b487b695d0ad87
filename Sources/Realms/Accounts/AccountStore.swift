import Foundation
import JOSE
import Storage

/// Stores a realm's accounts and their provider identities. Admin changes are audited with
/// emails as hashes and names redacted, so the audit trail keeps no personal data of an
/// account once it is deleted.
public struct AccountStore: Sendable {
    private let database: any Database
    private let sessions: any AccountSessionRevoker
    private let deletionHook: (any AccountDeletionHook)?
    private let now: @Sendable () -> Date

    /// `sessionRevoker` ends an account's sessions when it is disabled or deleted (TokenIssuer's
    /// `SessionRevoker`); `deletionHook`, when given, runs after a deletion commits (revoking
    /// the account's Apple tokens).
    public init(database: any Database, sessionRevoker: any AccountSessionRevoker,
                deletionHook: (any AccountDeletionHook)?, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.sessions = sessionRevoker
        self.deletionHook = deletionHook
        self.now = now
    }

    /// Creates an account (login does this; it is not an admin change, so not audited).
    /// Throws `notFound` (realm), `invalidInput` or `conflict` (email taken in the realm).
    public func create(realmID: String, _ new: NewAccount) async throws -> Account {
        var issues = FieldIssues()
        if let problem = InputRules.emailProblem(new.email) { issues.add("email", problem) }
        new.name.validate(into: &issues)
        if let picture = new.pictureURL, let problem = InputRules.pictureURLProblem(picture) { issues.add("picture", problem) }
        try issues.throwIfAny()
        let at = now().unixSeconds
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            return try Self.insert(db, realmID: realmID, new, at: at)
        }
    }

    /// Links a provider identity to an account. Throws `notFound` (account) or `conflict`
    /// (the identity is already linked).
    public func link(realmID: String, provider: String, openID: String, accountID: String,
                     email: String?) async throws -> Identity {
        let at = now().unixSeconds
        return try await database.write { db in
            guard try Self.load(db, realmID: realmID, id: accountID) != nil else { throw RealmsError.notFound("account") }
            return try Self.link(db, Identity(realmId: realmID, provider: provider, openId: openID, accountId: accountID,
                                              email: email, linkedAt: at))
        }
    }

    /// The account, or nil (deleted accounts are returned, with status `deleted`).
    public func account(realmID: String, id: String) async throws -> Account? {
        try await database.read { db in try Self.load(db, realmID: realmID, id: id) }
    }

    /// The identities linked to an account, oldest first.
    public func identities(realmID: String, accountID: String) async throws -> [Identity] {
        try await database.read { db in try Self.identities(db, realmID: realmID, accountID: accountID) }
    }

    /// The realm's accounts in creation order, filtered. Keyset-paged on an increasing
    /// sequence, so accounts inserted meanwhile neither shift nor repeat pages.
    /// Throws `notFound` for an unknown realm.
    public func list(realmID: String, filter: AccountFilter = AccountFilter(),
                     page: PageRequest = .first) async throws -> Page<Account> {
        let after = try page.cursor.map { cursor throws(RealmsError) in try ListCursor.decodeInteger(cursor, list: "accounts") }
        return try await database.read { db in
            try RealmStore.requireRealm(db, id: realmID)
            var sql = "SELECT * FROM accounts a WHERE a.realm_id = ? AND a.seq > ?"
            var parameters: [SQLValue] = [.text(realmID), .integer(after ?? 0)]
            if let email = filter.email {
                sql += " AND a.email = ?"
                parameters.append(.text(Self.normalizedEmail(email)))
            }
            if let status = filter.status {
                sql += " AND a.status = ?"
                parameters.append(.text(status.rawValue))
            }
            if let provider = filter.provider {
                sql += " AND EXISTS (SELECT 1 FROM identities i WHERE i.realm_id = a.realm_id AND i.provider = ? AND i.account_id = a.id)"
                parameters.append(.text(provider))
            }
            sql += " ORDER BY a.seq LIMIT ?"
            parameters.append(.integer(Int64(page.limit + 1)))
            let rows = try db.query(sql, parameters)
            let accounts = try rows.prefix(page.limit).map(Self.account(from:))
            let next = rows.count > page.limit
                ? try rows[page.limit - 1].int("seq")
                : nil
            return Page(items: accounts, nextCursor: next.map { ListCursor.encode(list: "accounts", key: $0) })
        }
    }

    /// Applies an operator's changes; disabling revokes the account's sessions in the same
    /// transaction. Throws `notFound`, `invalidInput`, or `conflict` (deleted account, email taken).
    public func update(realmID: String, id: String, changes: AccountChanges, context: ChangeContext) async throws -> Account {
        let at = now().unixSeconds
        let sessions = self.sessions
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            guard let before = try Self.load(db, realmID: realmID, id: id) else { throw RealmsError.notFound("account") }
            guard before.status != .deleted else { throw RealmsError.conflict("The account is deleted") }
            var after = try changes.applied(to: before)
            after.updatedAt = at
            do {
                try db.execute("""
                    UPDATE accounts SET email = ?, email_verified = ?, given_name = ?, family_name = ?, display_name = ?,
                        status = ?, updated_at = ?
                    WHERE realm_id = ? AND id = ?
                    """,
                    .text(after.email), SQLValue(after.emailVerified), .optional(after.name.givenName),
                    .optional(after.name.familyName), .optional(after.name.displayName), .text(after.status.rawValue),
                    .integer(at), .text(realmID), .text(id))
            } catch let error as StorageError where error.code == .uniqueViolation {
                throw RealmsError.conflict("Another account of the realm has this email")
            }
            if before.status != .disabled, after.status == .disabled {
                try sessions.revokeSessions(realmID: realmID, accountID: id, in: db)
            }
            if before.status != after.status {
                try SecurityEventLog.record(db, NewSecurityEvent(
                    realmID: realmID, type: after.status == .disabled ? .accountDisabled : .accountEnabled, at: at,
                    accountID: id, actor: context.actor))
            }
            try AuditLog.record(db, at: at, context: context, action: "account.update", target: Self.target(realmID, id),
                                realmID: realmID, changes: Self.auditChanges(before: before, after: after))
            return after
        }
    }

    /// Deletes an account: its email is freed (replaced by a placeholder; only a SHA-256 of
    /// the original is kept), its name and picture cleared, identities unlinked, sessions
    /// revoked, the deletion hook run (queueing the revocation of its Apple tokens) and the
    /// requester's event recorded, in one transaction. Deleting an already deleted account changes nothing and
    /// answers what the deletion that did it recorded. The one path of the admin delete and the
    /// owner's `DELETE /me`. Throws `notFound` (realm or account).
    public func delete(realmID: String, id: String, by requester: AccountDeletionRequester) async throws -> AccountDeletion {
        let at = now().unixSeconds
        let sessions = self.sessions
        let hook = deletionHook
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            guard try Self.load(db, realmID: realmID, id: id) != nil else { throw RealmsError.notFound("account") }
            if let deletion = try Self.delete(db, realmID: realmID, id: id, at: at, by: requester, sessions: sessions,
                                              hook: hook) {
                return deletion
            }
            return AccountDeletion(deletedNow: false, followUp: try Self.recordedFollowUp(db, realmID: realmID, accountID: id))
        }
    }

    /// An operator's delete (see ``delete(realmID:id:by:)``).
    public func delete(realmID: String, id: String, context: ChangeContext) async throws {
        _ = try await delete(realmID: realmID, id: id, by: .admin(context))
    }

    /// `delete` inside the caller's write transaction, without the deletion hook (Apple's
    /// `account-delete` notification, whose tokens Apple already ended): returns false when there
    /// was no such account or it was already deleted (nothing changed, nothing audited).
    @discardableResult
    public static func delete(_ db: any SQLExecutor, realmID: String, id: String, at: Int64, context: ChangeContext,
                              sessions: any AccountSessionRevoker) throws -> Bool {
        try delete(db, realmID: realmID, id: id, at: at, by: .admin(context), sessions: sessions, hook: nil) != nil
    }

    /// The deletion itself; nil when there was no such account or it was already deleted.
    static func delete(_ db: any SQLExecutor, realmID: String, id: String, at: Int64, by requester: AccountDeletionRequester,
                       sessions: any AccountSessionRevoker, hook: (any AccountDeletionHook)?) throws -> AccountDeletion? {
        guard let before = try load(db, realmID: realmID, id: id), before.status != .deleted else { return nil }
        var after = before
        after.email = deletedEmail(accountID: id)
        after.emailVerified = false
        after.isPrivateEmail = false
        after.name = PersonName()
        after.pictureURL = nil
        after.status = .deleted
        after.updatedAt = at
        try db.execute("""
            UPDATE accounts SET email = ?, email_verified = 0, is_private_email = 0, given_name = NULL,
                family_name = NULL, display_name = NULL, picture_url = NULL, status = 'deleted', deleted_email_hash = ?,
                updated_at = ?
            WHERE realm_id = ? AND id = ?
            """,
            .text(after.email), .blob(SHA256.hash(before.email)), .integer(at), .text(realmID), .text(id))
        try db.execute("DELETE FROM identities WHERE realm_id = ? AND account_id = ?", .text(realmID), .text(id))
        try sessions.revokeSessions(realmID: realmID, accountID: id, in: db)
        let followUp = try hook?.accountDeleted(realmID: realmID, accountID: id, at: at, in: db)
        let context: ChangeContext
        switch requester {
        case .admin(let admin):
            context = admin
            try SecurityEventLog.record(db, NewSecurityEvent(realmID: realmID, type: .accountDeleted, at: at,
                                                             reason: followUp, accountID: id, actor: admin.actor))
        case .owner(let sessionID, let clientID, let clientIP):
            context = try ChangeContext(actor: Self.ownerActor)
            try SecurityEventLog.record(db, NewSecurityEvent(realmID: realmID, type: .accountDeletedByUser, at: at,
                                                             reason: followUp, accountID: id, clientID: clientID,
                                                             sessionID: sessionID, clientIP: clientIP))
        }
        try AuditLog.record(db, at: at, context: context, action: "account.delete", target: target(realmID, id),
                            realmID: realmID, changes: auditChanges(before: before, after: after))
        return AccountDeletion(deletedNow: true, followUp: followUp)
    }

    /// The audit actor of an owner's own deletion.
    public static let ownerActor = "account-owner"

    /// The hook's label recorded with the account's deletion (the newest deletion event's reason).
    static func recordedFollowUp(_ db: any SQLExecutor, realmID: String, accountID: String) throws -> String? {
        try db.queryOne("""
            SELECT reason FROM security_events WHERE realm_id = ? AND account_id = ? AND type IN (?, ?)
            ORDER BY id DESC LIMIT 1
            """, .text(realmID), .text(accountID), .text(SecurityEventType.accountDeleted.rawValue),
            .text(SecurityEventType.accountDeletedByUser.rawValue))?.optionalString("reason")
    }

    // MARK: - Inside transactions (for account resolution)

    /// Emails are compared and stored lowercased.
    public static func normalizedEmail(_ email: String) -> String {
        // ASCII letters only: full Unicode case mapping (and NFC/NFKC, which map the Kelvin
        // sign U+212A to "K") fold look-alikes together, so a crafted address would match, and
        // link to, someone else's account. Other characters are kept as sent.
        String(decoding: email.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether linking by `email` may be trusted: ASCII only, since no normalisation makes
    /// every Unicode look-alike of an address compare equal or unequal as a person reads it.
    public static func isLinkableEmail(_ email: String) -> Bool { email.utf8.allSatisfy { $0 < 0x80 } }

    /// The placeholder that replaces a deleted account's email (unique, never deliverable).
    public static func deletedEmail(accountID: String) -> String { "deleted+\(accountID)@deleted.invalid" }

    /// Inserts an account; throws `conflict` when the email is taken in the realm.
    public static func insert(_ db: any SQLExecutor, realmID: String, _ new: NewAccount, at: Int64) throws -> Account {
        let account = Account(id: SecureRandom.token(byteCount: 16), realmId: realmID, email: normalizedEmail(new.email),
                              emailVerified: new.emailVerified, isPrivateEmail: new.isPrivateEmail, name: new.name,
                              pictureURL: new.pictureURL, status: new.status, createdAt: at, updatedAt: at)
        do {
            try db.execute("""
                INSERT INTO accounts (id, realm_id, email, email_verified, is_private_email, given_name, family_name,
                    display_name, picture_url, status, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                .text(account.id), .text(realmID), .text(account.email), SQLValue(account.emailVerified),
                SQLValue(account.isPrivateEmail), .optional(account.name.givenName), .optional(account.name.familyName),
                .optional(account.name.displayName), .optional(account.pictureURL), .text(account.status.rawValue),
                .integer(at), .integer(at))
        } catch where error.code == .uniqueViolation {
            throw RealmsError.conflict("Another account of the realm has this email")
        }
        return account
    }

    /// Links an identity; throws `conflict` when (realm, provider, openId) is already linked.
    @discardableResult
    public static func link(_ db: any SQLExecutor, _ identity: Identity) throws -> Identity {
        do {
            try db.execute("""
                INSERT INTO identities (realm_id, provider, open_id, account_id, email, linked_at) VALUES (?, ?, ?, ?, ?, ?)
                """,
                .text(identity.realmId), .text(identity.provider), .text(identity.openId), .text(identity.accountId),
                .optional(identity.email), .integer(identity.linkedAt))
        } catch where error.code == .uniqueViolation {
            throw RealmsError.conflict("This identity is already linked to an account")
        }
        return identity
    }

    /// Loads an account of the realm.
    public static func load(_ db: any SQLExecutor, realmID: String, id: String) throws -> Account? {
        let statement = loadStatement(realmID: realmID, id: id)
        return try db.queryOne(statement.sql, statement.parameters).map(account(from:))
    }

    /// What `load(_:realmID:id:)` runs, for a caller that sends it with other statements in one
    /// round trip (`SQLExecutor.queryBatch`); its row, if any, decodes with `account(from:)`.
    public static func loadStatement(realmID: String, id: String) -> (sql: String, parameters: [SQLValue]) {
        ("SELECT * FROM accounts WHERE realm_id = ? AND id = ?", [.text(realmID), .text(id)])
    }

    /// The read of the realm's account whose id `idQuery` selects (one column, at most one
    /// row, from the caller's own tables), for a caller that sends it with the statements that
    /// lead to the account, in one round trip.
    public static func loadStatement(realmID: String, idSelectedBy idQuery: (sql: String, parameters: [SQLValue]))
        -> (sql: String, parameters: [SQLValue]) {
        ("SELECT * FROM accounts WHERE realm_id = ? AND id = (\(idQuery.sql))", [.text(realmID)] + idQuery.parameters)
    }

    /// The account an identity is linked to, if any.
    public static func load(_ db: any SQLExecutor, realmID: String, provider: String, openID: String) throws -> Account? {
        let statement = profileStatement(realmID: realmID, provider: provider, openID: openID)
        return try db.queryOne(statement.sql, statement.parameters).map(account(from:))
    }

    /// The account an identity is linked to, with every identity of that account: one row per
    /// identity, in no order, each the account's columns, the given identity's own email
    /// (`identity_email`) and that row's identity (`linkedIdentities(fromRows:)`, which puts them
    /// in `Identity.precedesInLinkOrder`). A returning
    /// login reads its account and the profile its answer shows in this one statement.
    public static func profileStatement(realmID: String, provider: String, openID: String)
        -> (sql: String, parameters: [SQLValue]) {
        ("""
            SELECT a.*, i.email AS identity_email, \(linkedIdentityColumns)
            FROM identities i JOIN accounts a ON a.id = i.account_id
            JOIN identities o ON o.realm_id = i.realm_id AND o.account_id = i.account_id
            WHERE i.realm_id = ? AND i.provider = ? AND i.open_id = ?
            """, [.text(realmID), .text(provider), .text(openID)])
    }

    /// A profile statement's identity columns (`o`), named apart from the account's own.
    private static let linkedIdentityColumns = linkedIdentityColumns(alias: "o")

    /// The columns of `identities` joined as `alias`, named as `linkedIdentities(fromRows:)` reads them.
    static func linkedIdentityColumns(alias: String) -> String {
        """
        \(alias).provider AS linked_provider, \(alias).open_id AS linked_open_id, \(alias).email AS linked_email,
        \(alias).linked_at AS linked_at, \(alias).email_relay_enabled AS linked_email_relay_enabled
        """
    }

    /// The identities of a `profileStatement`'s rows (each row also decodes as the account), oldest first.
    public static func linkedIdentities(fromRows rows: [Row]) throws -> [Identity] {
        try linkedIdentities(fromRows: rows, names: .asStored)
    }

    /// The identities of rows that name their account's columns `names`, oldest first.
    static func linkedIdentities(fromRows rows: [Row], names: AccountColumnNames) throws -> [Identity] {
        try rows.compactMap { row in
            guard let provider = try row.optionalString("linked_provider") else { return nil }
            return Identity(realmId: try row.string(names.realmID), provider: provider,
                            openId: try row.string("linked_open_id"), accountId: try row.string(names.id),
                            email: try row.optionalString("linked_email"), linkedAt: try row.int("linked_at"),
                            emailRelayEnabled: try row.optionalInt("linked_email_relay_enabled").map { $0 != 0 })
        }.sorted(by: Identity.precedesInLinkOrder)
    }

    /// Loads the realm's account with this email (compared lowercased).
    public static func load(_ db: any SQLExecutor, realmID: String, email: String) throws -> Account? {
        try db.queryOne("SELECT * FROM accounts WHERE realm_id = ? AND email = ?", .text(realmID),
                        .text(normalizedEmail(email))).map(account(from:))
    }

    /// An account's identities, oldest first.
    public static func identities(_ db: any SQLExecutor, realmID: String, accountID: String) throws -> [Identity] {
        let statement = identitiesStatement(realmID: realmID, accountID: accountID)
        return try identities(fromRows: db.query(statement.sql, statement.parameters))
    }

    /// The read of `identities(_:realmID:accountID:)`, for a caller that defers it.
    static func identitiesStatement(realmID: String, accountID: String) -> (sql: String, parameters: [SQLValue]) {
        ("SELECT * FROM identities WHERE realm_id = ? AND account_id = ?",
         [.text(realmID), .text(accountID)])
    }

    static func identities(fromRows rows: [Row]) throws -> [Identity] {
        try rows.map { row in
            Identity(realmId: try row.string("realm_id"), provider: try row.string("provider"),
                     openId: try row.string("open_id"), accountId: try row.string("account_id"),
                     email: try row.optionalString("email"), linkedAt: try row.int("linked_at"),
                     emailRelayEnabled: try row.optionalInt("email_relay_enabled").map { $0 != 0 })
        }.sorted(by: Identity.precedesInLinkOrder)
    }

    /// Unlinks one identity inside the caller's transaction; returns whether it was linked.
    @discardableResult
    public static func unlink(_ db: any SQLExecutor, realmID: String, provider: String, openID: String) throws -> Bool {
        try db.execute("DELETE FROM identities WHERE realm_id = ? AND provider = ? AND open_id = ?",
                       .text(realmID), .text(provider), .text(openID)) > 0
    }

    /// Records whether the provider forwards mail to the identity's relay address, inside the
    /// caller's transaction; returns whether the identity exists.
    @discardableResult
    public static func setEmailRelay(_ db: any SQLExecutor, realmID: String, provider: String, openID: String,
                                     enabled: Bool) throws -> Bool {
        try db.execute("""
            UPDATE identities SET email_relay_enabled = ? WHERE realm_id = ? AND provider = ? AND open_id = ?
            """, .integer(enabled ? 1 : 0), .text(realmID), .text(provider), .text(openID)) > 0
    }

    static func target(_ realmID: String, _ id: String) -> String { "realms/\(realmID)/accounts/\(id)" }

    /// An account from a row of `accounts` (`SELECT *`).
    public static func account(from row: Row) throws -> Account {
        try account(from: row, names: .asStored)
    }

    /// An account from a row that names its columns `names`.
    static func account(from row: Row, names: AccountColumnNames) throws -> Account {
        Account(id: try row.string(names.id), realmId: try row.string(names.realmID), email: try row.string(names.email),
                emailVerified: try row.bool(names.emailVerified), isPrivateEmail: try row.bool(names.isPrivateEmail),
                name: PersonName(givenName: try row.optionalString(names.givenName),
                                 familyName: try row.optionalString(names.familyName),
                                 displayName: try row.optionalString(names.displayName)),
                pictureURL: try row.optionalString(names.pictureURL),
                status: AccountStatus(rawValue: try row.string(names.status)) ?? .disabled,
                createdAt: try row.int(names.createdAt), updatedAt: try row.int(names.updatedAt))
    }

    /// Audit changes with personal data removed: emails appear as `sha256:<hex>`, names and
    /// pictures as redacted.
    static func auditChanges(before: Account, after: Account) -> [String: FieldChange] {
        var changes = AuditDiff.changes(before: before, after: after)
        if changes["email"] != nil {
            changes["email"] = FieldChange(before: .string(emailDigest(before.email)), after: .string(emailDigest(after.email)))
        }
        if changes["name"] != nil {
            changes["name"] = FieldChange(before: before.name.isEmpty ? .null : .string(AuditDiff.redacted),
                                          after: after.name.isEmpty ? .null : .string(AuditDiff.redacted))
        }
        if changes["picture"] != nil {
            changes["picture"] = FieldChange(before: before.pictureURL == nil ? .null : .string(AuditDiff.redacted),
                                             after: after.pictureURL == nil ? .null : .string(AuditDiff.redacted))
        }
        return changes
    }

    static func emailDigest(_ email: String) -> String {
        "sha256:" + SHA256.hexDigest(email)
    }
}

import Foundation
import Storage

/// Creates, reads, updates and deletes realms; every change is audited in its transaction.
public struct RealmStore: Sendable {
    /// Work that must commit with a change to a realm (e.g. creating its first signing key).
    public typealias TransactionHook = @Sendable (_ executor: any SQLExecutor, _ realm: Realm) throws -> Void

    private let database: any Database
    private let now: @Sendable () -> Date

    public init(database: any Database, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    /// Creates a realm with `changes` over the defaults. `provisioning` runs in the same
    /// transaction, so a realm never exists without what it provisions.
    /// Throws `invalidInput` (fields named) or `conflict` when the id is taken.
    public func create(id: String, changes: RealmChanges = RealmChanges(), context: ChangeContext,
                       provisioning: TransactionHook? = nil) async throws -> Realm {
        var issues = FieldIssues()
        if let problem = InputRules.realmIDProblem(id) { issues.add("id", problem) }
        let at = now().unixSeconds
        let realm: Realm
        do {
            realm = try changes.applied(to: Realm(id: InputRules.isSlug(id) ? id : "placeholder", createdAt: at))
        } catch {
            issues.merge(error.fieldIssues)
            throw RealmsError.invalid(issues.all)
        }
        try issues.throwIfAny()
        return try await database.write { db in
            do {
                try Self.insert(realm, into: db)
            } catch let error as StorageError where error.code == .uniqueViolation {
                throw RealmsError.conflict("A realm with this id already exists")
            }
            try provisioning?(db, realm)
            try AuditLog.record(db, at: at, context: context, action: "realm.create", target: Self.target(realm.id),
                                realmID: realm.id, changes: AuditDiff.changes(before: nil, after: realm))
            return realm
        }
    }

    /// The realm with this id, or nil.
    public func realm(_ id: String) async throws -> Realm? {
        guard InputRules.isSlug(id) else { return nil }
        return try await database.read { db in try Self.load(db, id: id) }
    }

    /// The realm when it exists and is enabled — what every public route serves; a disabled
    /// realm answers like an unknown one (404).
    public func enabledRealm(_ id: String) async throws -> Realm? {
        guard let realm = try await realm(id), realm.enabled else { return nil }
        return realm
    }

    /// The enabled realm with its `RealmSettingsVersion` stamp, read from one row: what a node
    /// remembers for later requests that compare the stamp inside their own write.
    public func enabledRealmStamped(_ id: String) async throws -> (realm: Realm, stamp: String)? {
        guard InputRules.isSlug(id) else { return nil }
        return try await database.read { db -> (realm: Realm, stamp: String)? in
            guard let row = try db.queryOne("SELECT * FROM realms WHERE id = ?", .text(id)) else { return nil }
            let realm = try Self.realm(from: row)
            guard realm.enabled else { return nil }
            return (realm, try row.string("settings_version"))
        }
    }

    /// Realms ordered by id.
    /// `only` narrows the list to those realm ids (a realm-scoped admin token's realms).
    public func list(page: PageRequest = .first, only: Set<String>? = nil) async throws -> Page<Realm> {
        let after = try page.cursor.map { cursor throws(RealmsError) in try ListCursor.decode(cursor, list: "realms") }
        return try await database.read { db in
            var parameters: [SQLValue] = [.text(after ?? "")]
            var scope = ""
            if let only {
                // An empty scope must list nothing, and `IN ()` is not valid SQL.
                scope = only.isEmpty ? " AND 1 = 0" : " AND id IN (\(Array(repeating: "?", count: only.count).joined(separator: ", ")))"
                parameters += only.sorted().map(SQLValue.text)
            }
            parameters.append(.integer(Int64(page.limit + 1)))
            let rows = try db.query("SELECT * FROM realms WHERE id > ?\(scope) ORDER BY id LIMIT ?", parameters)
            let realms = try rows.prefix(page.limit).map(Self.realm(from:))
            let next = rows.count > page.limit ? realms.last.map { ListCursor.encode(list: "realms", key: $0.id) } : nil
            return Page(items: realms, nextCursor: next)
        }
    }

    /// Applies `changes`; `onChange` runs in the same transaction with the old and new realm.
    /// Throws `notFound` or `invalidInput`.
    public func update(_ id: String, changes: RealmChanges, context: ChangeContext,
                       onChange: (@Sendable (_ executor: any SQLExecutor, _ before: Realm, _ after: Realm) throws -> Void)? = nil)
        async throws -> Realm {
        let at = now().unixSeconds
        return try await database.write { db in
            guard let before = try Self.load(db, id: id) else { throw RealmsError.notFound("realm") }
            var after = try changes.applied(to: before)
            after.updatedAt = at
            try db.execute("""
                UPDATE realms SET display_name = ?, enabled = ?, registration_enabled = ?, email_linking = ?,
                    nonce_required = ?, access_token_ttl = ?, refresh_token_ttl = ?, refresh_idle_ttl = ?, login_url = ?,
                    signing_algorithm = ?, rate_limit_failures = ?, rate_limit_window = ?, updated_at = ?
                WHERE id = ?
                """,
                .text(after.displayName), SQLValue(after.enabled), SQLValue(after.registrationEnabled),
                .text(after.emailLinking.rawValue), SQLValue(after.nonceRequired), SQLValue(after.accessTokenTTL),
                SQLValue(after.refreshTokenTTL), after.refreshIdleTTL.map { .integer(Int64($0)) } ?? .null,
                .optional(after.loginUrl), .text(after.signingAlgorithm.rawValue),
                SQLValue(after.rateLimit.failuresPerWindow), SQLValue(after.rateLimit.windowSeconds), .integer(at),
                .text(id))
            try RealmSettingsVersion.bump(db, realmID: id)
            try onChange?(db, before, after)
            try AuditLog.record(db, at: at, context: context, action: "realm.update", target: Self.target(id),
                                realmID: id, changes: AuditDiff.changes(before: before, after: after))
            return after
        }
    }

    /// Deletes a realm and everything in it (providers, clients, accounts, keys cascade), and
    /// files its audit entries under no realm (`AuditLog.fileUnderNoRealm`), so a realm created
    /// again under its id does not show the old tenant's history to a token scoped to it.
    /// Throws `notFound`.
    public func delete(_ id: String, context: ChangeContext) async throws {
        let at = now().unixSeconds
        try await database.write { db in
            guard let before = try Self.load(db, id: id) else { throw RealmsError.notFound("realm") }
            try db.execute("DELETE FROM realms WHERE id = ?", .text(id))
            // Not by cascade on PostgreSQL, where security_events has no realm foreign key.
            try SecurityEventLog.deleteRealm(db, realmID: id)
            try AdminTokenStore.removeFromScopes(db, realmID: id)
            // The realm's history goes under no realm, the delete with it (see `AuditLog`): a
            // realm created later under this id starts with an empty audit.
            try AuditLog.fileUnderNoRealm(db, realmID: id)
            try AuditLog.record(db, at: at, context: context, action: "realm.delete", target: Self.target(id),
                                realmID: nil, changes: AuditDiff.changes(before: before, after: nil))
        }
    }

    // MARK: - Rows

    /// The audit target of a realm.
    static func target(_ id: String) -> String { "realms/\(id)" }

    /// Loads a realm inside a transaction.
    public static func load(_ db: any SQLExecutor, id: String) throws -> Realm? {
        try db.queryOne("SELECT * FROM realms WHERE id = ?", .text(id)).map(realm(from:))
    }

    /// Throws `notFound("realm")` unless the realm exists.
    public static func requireRealm(_ db: any SQLExecutor, id: String) throws {
        guard try db.queryOne("SELECT id FROM realms WHERE id = ?", .text(id)) != nil else {
            throw RealmsError.notFound("realm")
        }
    }

    /// The longest access-token lifetime the realm or any of its clients sets, in seconds, read
    /// in one query inside the caller's transaction; nil for an unknown realm. TokenIssuer keeps
    /// a retired signing key published at least this long, so every token it signed expires first.
    public static func longestAccessTokenTTL(_ db: any SQLExecutor, realmID: String) throws -> Int64? {
        guard let row = try db.queryOne("""
            SELECT r.access_token_ttl AS realm_ttl,
                   (SELECT MAX(c.access_token_ttl) FROM client_apps c WHERE c.realm_id = r.id) AS client_ttl
            FROM realms r WHERE r.id = ?
            """, .text(realmID)) else { return nil }
        return max(try row.int("realm_ttl"), try row.optionalInt("client_ttl") ?? 0)
    }

    static func insert(_ realm: Realm, into db: any SQLExecutor) throws {
        try db.execute("""
            INSERT INTO realms (id, display_name, enabled, registration_enabled, email_linking, nonce_required,
                access_token_ttl, refresh_token_ttl, refresh_idle_ttl, login_url, signing_algorithm, rate_limit_failures,
                rate_limit_window, created_at, updated_at, settings_version)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            .text(realm.id), .text(realm.displayName), SQLValue(realm.enabled), SQLValue(realm.registrationEnabled),
            .text(realm.emailLinking.rawValue), SQLValue(realm.nonceRequired), SQLValue(realm.accessTokenTTL),
            SQLValue(realm.refreshTokenTTL), realm.refreshIdleTTL.map { .integer(Int64($0)) } ?? .null,
            .optional(realm.loginUrl), .text(realm.signingAlgorithm.rawValue),
            SQLValue(realm.rateLimit.failuresPerWindow), SQLValue(realm.rateLimit.windowSeconds),
            .integer(realm.createdAt), .integer(realm.updatedAt), .text(RealmSettingsVersion.fresh()))
    }

    static func realm(from row: Row) throws -> Realm {
        var realm = Realm(id: try row.string("id"), createdAt: try row.int("created_at"))
        realm.displayName = try row.string("display_name")
        realm.enabled = try row.bool("enabled")
        realm.registrationEnabled = try row.bool("registration_enabled")
        realm.emailLinking = EmailLinking(rawValue: try row.string("email_linking")) ?? .verified
        realm.nonceRequired = try row.bool("nonce_required")
        realm.accessTokenTTL = Int(try row.int("access_token_ttl"))
        realm.refreshTokenTTL = Int(try row.int("refresh_token_ttl"))
        realm.refreshIdleTTL = try row.optionalInt("refresh_idle_ttl").map { Int($0) }
        realm.loginUrl = try row.optionalString("login_url")
        realm.signingAlgorithm = SigningAlgorithm(rawValue: try row.string("signing_algorithm")) ?? .es256
        realm.rateLimit = RateLimit(failuresPerWindow: Int(try row.int("rate_limit_failures")),
                                    windowSeconds: Int(try row.int("rate_limit_window")))
        realm.updatedAt = try row.int("updated_at")
        return realm
    }
}

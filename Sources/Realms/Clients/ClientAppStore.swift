import Foundation
import JOSE
import Storage

/// Stores a realm's client apps. Secrets are generated here, returned once, and kept only as
/// SHA-256 hashes (they are 256 random bits, so a slow hash would buy nothing).
public struct ClientAppStore: Sendable {
    private let database: any Database
    private let sessions: any ClientSessionRevoker
    private let now: @Sendable () -> Date

    /// `sessionRevoker` ends a client's sessions when it is disabled or deleted (TokenIssuer's
    /// `SessionRevoker`; sessions also refuse a disabled or deleted client at use).
    public init(database: any Database, sessionRevoker: any ClientSessionRevoker,
                now: @escaping @Sendable () -> Date) {
        self.database = database
        sessions = sessionRevoker
        self.now = now
    }

    /// Registers a client; a confidential one gets a secret, returned once.
    /// Throws `invalidInput`, `notFound` (realm) or `conflict` (client id taken in the realm).
    public func create(realmID: String, clientID: String, changes: ClientAppChanges,
                       context: ChangeContext) async throws -> ClientAppWithSecret {
        var issues = FieldIssues()
        if let problem = InputRules.clientIDProblem(clientID) { issues.add("clientId", problem) }
        if changes.name == nil { issues.add("name", "is required") }
        let at = now().unixSeconds
        var client = ClientApp(realmId: realmID, clientId: clientID, name: "", createdAt: at)
        client.instanceID = SecureRandom.token(byteCount: 16)
        do {
            client = try changes.applied(to: client)
        } catch {
            issues.merge(error.fieldIssues)
        }
        try issues.throwIfAny()
        let secret = client.confidential ? Self.newSecret() : nil
        let created = client
        try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            do {
                try db.execute("""
                    INSERT INTO client_apps (realm_id, client_id, name, first_party, confidential, secret_hash,
                        redirect_uris, allowed_scopes, enabled, ip_binding, access_token_ttl, refresh_token_ttl,
                        refresh_idle_ttl, created_at, updated_at, instance_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    .text(realmID), .text(clientID), .text(created.name), SQLValue(created.firstParty),
                    SQLValue(created.confidential), secret.map { .blob(SHA256.hash($0)) } ?? .null,
                    .text(JSONColumn.encode(created.redirectUris)), .text(JSONColumn.encode(created.allowedScopes)),
                    SQLValue(created.enabled), SQLValue(created.ipBinding), Self.optional(created.accessTokenTTL),
                    Self.optional(created.refreshTokenTTL), Self.optional(created.refreshIdleTTL), .integer(at), .integer(at),
                    .text(created.instanceID))
            } catch let error as StorageError where error.code == .uniqueViolation {
                throw RealmsError.conflict("A client with this clientId already exists in the realm")
            }
            try RealmSettingsVersion.bump(db, realmID: realmID)
            var changes = AuditDiff.changes(before: nil, after: created)
            if secret != nil { changes["clientSecret"] = .redactedSecret }
            try AuditLog.record(db, at: at, context: context, action: "client.create",
                                target: Self.target(realmID, clientID), realmID: realmID, changes: changes)
        }
        return ClientAppWithSecret(client: created, clientSecret: secret)
    }

    /// The client, or nil.
    public func client(realmID: String, clientID: String) async throws -> ClientApp? {
        try await database.read { db in try Self.load(db, realmID: realmID, clientID: clientID) }
    }

    /// The realm's clients ordered by client id. Throws `notFound` for an unknown realm.
    public func list(realmID: String, page: PageRequest = .first) async throws -> Page<ClientApp> {
        let after = try page.cursor.map { cursor throws(RealmsError) in try ListCursor.decode(cursor, list: "clients") }
        return try await database.read { db in
            try RealmStore.requireRealm(db, id: realmID)
            let rows = try db.query("SELECT * FROM client_apps WHERE realm_id = ? AND client_id > ? ORDER BY client_id LIMIT ?",
                                    .text(realmID), .text(after ?? ""), .integer(Int64(page.limit + 1)))
            let clients = try rows.prefix(page.limit).map(Self.client(from:))
            let next = rows.count > page.limit ? clients.last.map { ListCursor.encode(list: "clients", key: $0.clientId) } : nil
            return Page(items: clients, nextCursor: next)
        }
    }

    /// Applies `changes`. Making a client confidential generates its first secret (returned
    /// once); making it public drops the secret. Disabling it revokes its sessions in the same
    /// transaction, so enabling it again revives none. Throws `notFound` or `invalidInput`.
    public func update(realmID: String, clientID: String, changes: ClientAppChanges,
                       context: ChangeContext) async throws -> ClientAppWithSecret {
        let at = now().unixSeconds
        let candidateSecret = Self.newSecret()
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            guard let row = try db.queryOne("SELECT * FROM client_apps WHERE realm_id = ? AND client_id = ?",
                                            .text(realmID), .text(clientID))
            else { throw RealmsError.notFound("client") }
            let before = try Self.client(from: row)
            var after = try changes.applied(to: before)
            after.updatedAt = at
            var secretHash = try row.optionalBytes("secret_hash")
            var secret: String?
            if after.confidential, secretHash == nil {
                secret = candidateSecret
                secretHash = SHA256.hash(candidateSecret)
            } else if !after.confidential {
                secretHash = nil
            }
            try db.execute("""
                UPDATE client_apps SET name = ?, first_party = ?, confidential = ?, secret_hash = ?, redirect_uris = ?,
                    allowed_scopes = ?, enabled = ?, ip_binding = ?, access_token_ttl = ?, refresh_token_ttl = ?,
                    refresh_idle_ttl = ?, updated_at = ?
                WHERE realm_id = ? AND client_id = ?
                """,
                .text(after.name), SQLValue(after.firstParty), SQLValue(after.confidential),
                secretHash.map(SQLValue.blob) ?? .null, .text(JSONColumn.encode(after.redirectUris)),
                .text(JSONColumn.encode(after.allowedScopes)), SQLValue(after.enabled), SQLValue(after.ipBinding),
                Self.optional(after.accessTokenTTL), Self.optional(after.refreshTokenTTL),
                Self.optional(after.refreshIdleTTL), .integer(at), .text(realmID), .text(clientID))
            try RealmSettingsVersion.bump(db, realmID: realmID)
            if before.enabled, !after.enabled {
                try sessions.revokeSessions(realmID: realmID, clientID: clientID, in: db)
            }
            var auditChanges = AuditDiff.changes(before: before, after: after)
            if secret != nil { auditChanges["clientSecret"] = .redactedSecret }
            try AuditLog.record(db, at: at, context: context, action: "client.update",
                                target: Self.target(realmID, clientID), realmID: realmID, changes: auditChanges)
            return ClientAppWithSecret(client: after, clientSecret: secret)
        }
    }

    /// Replaces a confidential client's secret; the new one is returned once and the old one
    /// stops working at once. Throws `notFound`, or `invalidInput` for a public client.
    public func rotateSecret(realmID: String, clientID: String, context: ChangeContext) async throws -> ClientAppWithSecret {
        let at = now().unixSeconds
        let secret = Self.newSecret()
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            guard var client = try Self.load(db, realmID: realmID, clientID: clientID) else {
                throw RealmsError.notFound("client")
            }
            guard client.confidential else {
                throw RealmsError.invalid(field: "confidential", "the client is public and has no secret; make it confidential first")
            }
            client.updatedAt = at
            try db.execute("UPDATE client_apps SET secret_hash = ?, updated_at = ? WHERE realm_id = ? AND client_id = ?",
                           .blob(SHA256.hash(secret)), .integer(at), .text(realmID), .text(clientID))
            try RealmSettingsVersion.bump(db, realmID: realmID)
            try AuditLog.record(db, at: at, context: context, action: "client.secret.rotate",
                                target: Self.target(realmID, clientID), realmID: realmID,
                                changes: ["clientSecret": .redactedSecret])
            return ClientAppWithSecret(client: client, clientSecret: secret)
        }
    }

    /// Removes a client and revokes its sessions in the same transaction. Throws `notFound`.
    public func delete(realmID: String, clientID: String, context: ChangeContext) async throws {
        let at = now().unixSeconds
        try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            guard let before = try Self.load(db, realmID: realmID, clientID: clientID) else {
                throw RealmsError.notFound("client")
            }
            try db.execute("DELETE FROM client_apps WHERE realm_id = ? AND client_id = ?", .text(realmID), .text(clientID))
            try RealmSettingsVersion.bump(db, realmID: realmID)
            try sessions.revokeSessions(realmID: realmID, clientID: clientID, in: db)
            try AuditLog.record(db, at: at, context: context, action: "client.delete",
                                target: Self.target(realmID, clientID), realmID: realmID,
                                changes: AuditDiff.changes(before: before, after: nil))
        }
    }

    /// The client when it is enabled, confidential and `secret` is its current secret
    /// (constant-time comparison of hashes); nil otherwise.
    public func authenticate(realmID: String, clientID: String, secret: String) async throws -> ClientApp? {
        try await database.read { db in
            guard let row = try db.queryOne("SELECT * FROM client_apps WHERE realm_id = ? AND client_id = ?",
                                            .text(realmID), .text(clientID)),
                  let stored = try row.optionalBytes("secret_hash")
            else { return nil }
            let client = try Self.client(from: row)
            guard client.enabled, client.confidential, ConstantTime.equals(stored, SHA256.hash(secret)) else { return nil }
            return client
        }
    }

    // MARK: - Rows

    static func newSecret() -> String { SecureRandom.token(byteCount: 32) }

    static func target(_ realmID: String, _ clientID: String) -> String { "realms/\(realmID)/clients/\(clientID)" }

    static func optional(_ value: Int?) -> SQLValue { value.map { .integer(Int64($0)) } ?? .null }

    /// Loads a client inside a transaction.
    public static func load(_ db: any SQLExecutor, realmID: String, clientID: String) throws -> ClientApp? {
        try db.queryOne("SELECT * FROM client_apps WHERE realm_id = ? AND client_id = ?", .text(realmID), .text(clientID))
            .map(client(from:))
    }

    static func client(from row: Row) throws -> ClientApp {
        var client = ClientApp(realmId: try row.string("realm_id"), clientId: try row.string("client_id"),
                               name: try row.string("name"), createdAt: try row.int("created_at"))
        client.firstParty = try row.bool("first_party")
        client.confidential = try row.bool("confidential")
        client.redirectUris = try JSONColumn.strings(row, "redirect_uris")
        client.allowedScopes = try JSONColumn.strings(row, "allowed_scopes")
        client.enabled = try row.bool("enabled")
        client.ipBinding = try row.bool("ip_binding")
        client.accessTokenTTL = try row.optionalInt("access_token_ttl").map { Int($0) }
        client.refreshTokenTTL = try row.optionalInt("refresh_token_ttl").map { Int($0) }
        client.refreshIdleTTL = try row.optionalInt("refresh_idle_ttl").map { Int($0) }
        client.updatedAt = try row.int("updated_at")
        client.instanceID = try row.string("instance_id")
        return client
    }
}

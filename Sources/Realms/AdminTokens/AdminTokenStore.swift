import Foundation
import JOSE
import Storage

/// Named admin API tokens, stored as SHA-256 hashes. The name is the audit actor. Each token
/// has a role (admin or viewer) and a scope (all realms or a list). The token from
/// `HERALD_ADMIN_TOKEN` is registered under the reserved name "env", an admin of all realms.
public struct AdminTokenStore: Sendable {
    /// The name of the token that comes from `HERALD_ADMIN_TOKEN`.
    public static let environmentTokenName = "env"
    /// Shortest acceptable `HERALD_ADMIN_TOKEN`.
    public static let minimumTokenLength = 32
    /// Longest token presented to `authenticate` that is even hashed.
    static let maximumPresentedLength = 512
    /// Prefix of generated tokens, so secret scanners can recognise them.
    static let tokenPrefix = "hadm_"

    private let database: any Database
    private let now: @Sendable () -> Date

    public init(database: any Database, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    /// Generates a token named `name` with `role` over `scope` and returns it; this is the only
    /// time it is visible. Throws `invalidInput` (bad or reserved name, an empty scope, a realm
    /// that does not exist) or `conflict` (name taken).
    public func create(name: String, role: AdminRole = .admin, scope: AdminScope = .allRealms,
                       context: ChangeContext) async throws -> String {
        try await issue(name: name, role: role, scope: scope, context: context).secret
    }

    /// `create`, answering the stored token (for its creation time) beside the secret.
    public func issue(name: String, role: AdminRole = .admin, scope: AdminScope = .allRealms,
                      context: ChangeContext) async throws -> (token: AdminToken, secret: String) {
        if let problem = InputRules.tokenNameProblem(name) { throw RealmsError.invalid(field: "name", problem) }
        guard name != Self.environmentTokenName else {
            throw RealmsError.invalid(field: "name", "is reserved for HERALD_ADMIN_TOKEN")
        }
        let realmIDs = scope.sortedRealmIDs
        if let realmIDs {
            guard !realmIDs.isEmpty else { throw RealmsError.invalid(field: "realms", "must name at least one realm") }
            if let bad = realmIDs.first(where: { InputRules.realmIDProblem($0) != nil }) {
                throw RealmsError.invalid(field: "realms", "'\(bad.prefix(63))' is not a realm id")
            }
        }
        let token = Self.tokenPrefix + SecureRandom.token(byteCount: 32)
        let at = now().unixSeconds
        let scopeText = try realmIDs.map(Self.encodeScope)
        try await database.write { db in
            // Checked in the write transaction, so a realm deleted meanwhile cannot slip in.
            for realmID in realmIDs ?? [] where try db.queryOne("SELECT id FROM realms WHERE id = ?", .text(realmID)) == nil {
                throw RealmsError.invalid(field: "realms", "realm '\(realmID)' does not exist")
            }
            do {
                try db.execute("""
                    INSERT INTO admin_tokens (name, token_hash, created_at, role, realm_scope) VALUES (?, ?, ?, ?, ?)
                    """, .text(name), .blob(SHA256.hash(token)), .integer(at), .text(role.rawValue), .optional(scopeText))
            } catch let error as StorageError where error.code == .uniqueViolation {
                throw RealmsError.conflict("An admin token with this name already exists")
            }
            try AuditLog.record(db, at: at, context: context, action: "admin-token.create", target: Self.target(name),
                                realmID: nil, changes: [
                                    "name": FieldChange(before: .null, after: .string(name)),
                                    "role": FieldChange(before: .null, after: .string(role.rawValue)),
                                    "realms": FieldChange(before: .null,
                                                          after: realmIDs.map { .array($0.map(JSONValue.string)) } ?? .string("*")),
                                ])
        }
        return (AdminToken(name: name, createdAt: at, role: role, scope: scope), token)
    }

    /// Every token's name, role, scope and creation time, by name (never the hashes).
    public func list() async throws -> [AdminToken] {
        try await database.read { db in
            try db.query("SELECT name, created_at, role, realm_scope FROM admin_tokens ORDER BY name").map(Self.token(from:))
        }
    }

    /// One page of tokens by name, for the admin API.
    public func list(page: PageRequest) async throws -> Page<AdminToken> {
        let after = try page.cursor.map { cursor throws(RealmsError) in try ListCursor.decode(cursor, list: "admin-tokens") }
        return try await database.read { db in
            let rows = try db.query("""
                SELECT name, created_at, role, realm_scope FROM admin_tokens WHERE name > ? ORDER BY name LIMIT ?
                """, .text(after ?? ""), .integer(Int64(page.limit + 1)))
            let tokens = try rows.prefix(page.limit).map(Self.token(from:))
            let next = rows.count > page.limit ? tokens.last.map { ListCursor.encode(list: "admin-tokens", key: $0.name) } : nil
            return Page(items: tokens, nextCursor: next)
        }
    }

    /// Revokes the named token at once. Throws `notFound`, or `invalidInput` for "env"
    /// (it follows `HERALD_ADMIN_TOKEN`).
    public func revoke(name: String, context: ChangeContext) async throws {
        guard name != Self.environmentTokenName else {
            throw RealmsError.invalid(field: "name", "the env token follows HERALD_ADMIN_TOKEN; unset the variable instead")
        }
        let at = now().unixSeconds
        try await database.write { db in
            guard try db.execute("DELETE FROM admin_tokens WHERE name = ?", .text(name)) > 0 else {
                throw RealmsError.notFound("admin token")
            }
            try AuditLog.record(db, at: at, context: context, action: "admin-token.revoke", target: Self.target(name),
                                realmID: nil, changes: ["name": FieldChange(before: .string(name), after: .null)])
        }
    }

    /// The name of the token presented, or nil when it is not a current token.
    public func authenticate(_ presented: String) async throws -> String? {
        try await token(presented: presented)?.name
    }

    /// The token presented (name, role, scope), or nil when it is not a current token. Looked
    /// up by hash and confirmed with a constant-time comparison.
    public func token(presented: String) async throws -> AdminToken? {
        guard !presented.isEmpty, presented.utf8.count <= Self.maximumPresentedLength else { return nil }
        let hash = SHA256.hash(presented)
        return try await database.read { db in
            guard let row = try db.queryOne("""
                    SELECT name, token_hash, created_at, role, realm_scope FROM admin_tokens WHERE token_hash = ?
                    """, .blob(hash)),
                  ConstantTime.equals(try row.bytes("token_hash"), hash)
            else { return nil }
            return try Self.token(from: row)
        }
    }

    /// Makes the "env" token follow `HERALD_ADMIN_TOKEN` at start: registers (or replaces) its
    /// hash when set, removes it when unset, so unsetting the variable revokes the token.
    /// Throws `invalidInput` when the token is shorter than 32 characters.
    public func registerEnvironmentToken(_ token: String?) async throws {
        let at = now().unixSeconds
        guard let token else {
            _ = try await database.write { db in
                try db.execute("DELETE FROM admin_tokens WHERE name = ?", .text(Self.environmentTokenName))
            }
            return
        }
        guard token.count >= Self.minimumTokenLength, token.utf8.count <= Self.maximumPresentedLength else {
            throw RealmsError.invalid(field: "HERALD_ADMIN_TOKEN",
                                      "must be \(Self.minimumTokenLength) to \(Self.maximumPresentedLength) characters")
        }
        let hash = SHA256.hash(token)
        do {
            try await database.write { db in
                try db.execute("""
                    INSERT INTO admin_tokens (name, token_hash, created_at) VALUES (?, ?, ?)
                    ON CONFLICT (name) DO UPDATE SET token_hash = excluded.token_hash
                    """, .text(Self.environmentTokenName), .blob(hash), .integer(at))
            }
        } catch let error as StorageError where error.code == .uniqueViolation {
            // The hash is taken. Nodes starting together all register the same token, and on
            // PostgreSQL the loser of that race trips the token_hash key, not the upsert's name
            // key; that is success. Any other owner is a CLI token with the same value.
            guard try await authenticate(token) == Self.environmentTokenName else {
                throw RealmsError.conflict("HERALD_ADMIN_TOKEN equals a token created with the CLI")
            }
        }
    }

    static func target(_ name: String) -> String { "admin-tokens/\(name)" }

    /// Takes a deleted realm out of every token's scope, in the deleting transaction, so a
    /// realm created later under the same id is not reached by the old realm's tokens. A token
    /// left with no realm keeps working but sees nothing.
    static func removeFromScopes(_ db: any SQLExecutor, realmID: String) throws {
        for row in try db.query("SELECT name, realm_scope FROM admin_tokens WHERE realm_scope IS NOT NULL") {
            guard let text = try row.optionalString("realm_scope"),
                  let ids = try? JSONDecoder().decode([String].self, from: Data(text.utf8)), ids.contains(realmID)
            else { continue }
            try db.execute("UPDATE admin_tokens SET realm_scope = ? WHERE name = ?",
                           .text(try encodeScope(ids.filter { $0 != realmID })), .text(try row.string("name")))
        }
    }

    private static func encodeScope(_ realmIDs: [String]) throws -> String {
        String(decoding: try JSONEncoder().encode(realmIDs), as: UTF8.self)
    }

    /// A row as a token. An unreadable role or scope (only a hand-edited database has one)
    /// narrows to a viewer of no realm rather than widening to anything.
    private static func token(from row: Row) throws -> AdminToken {
        let role = AdminRole(rawValue: try row.string("role")) ?? .viewer
        let scope: AdminScope
        if let text = try row.optionalString("realm_scope") {
            let ids = (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
            scope = .realms(Set(ids))
        } else {
            scope = .allRealms
        }
        return AdminToken(name: try row.string("name"), createdAt: try row.int("created_at"), role: role, scope: scope)
    }
}

/// An admin token as listed: its name, creation time (unix seconds), role and scope, never the token.
public struct AdminToken: Sendable, Equatable {
    public let name: String
    public let createdAt: Int64
    public let role: AdminRole
    public let scope: AdminScope

    public init(name: String, createdAt: Int64, role: AdminRole = .admin, scope: AdminScope = .allRealms) {
        self.name = name
        self.createdAt = createdAt
        self.role = role
        self.scope = scope
    }
}

import Foundation
import JOSE
import Storage

/// Named admin API tokens, stored as SHA-256 hashes. The name is the audit actor. The token
/// from `HERALD_ADMIN_TOKEN` is registered under the reserved name "env".
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

    public init(database: any Database, now: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.now = now
    }

    /// Generates a token named `name` and returns it; this is the only time it is visible.
    /// Throws `invalidInput` (bad or reserved name) or `conflict` (name taken).
    public func create(name: String, context: ChangeContext) async throws -> String {
        if let problem = InputRules.tokenNameProblem(name) { throw RealmsError.invalid(field: "name", problem) }
        guard name != Self.environmentTokenName else {
            throw RealmsError.invalid(field: "name", "is reserved for HERALD_ADMIN_TOKEN")
        }
        let token = Self.tokenPrefix + SecureRandom.token(byteCount: 32)
        let at = now().unixSeconds
        try await database.write { db in
            do {
                try db.execute("INSERT INTO admin_tokens (name, token_hash, created_at) VALUES (?, ?, ?)",
                               .text(name), .blob(SHA256.hash(token)), .integer(at))
            } catch let error as StorageError where error.code == .uniqueViolation {
                throw RealmsError.conflict("An admin token with this name already exists")
            }
            try AuditLog.record(db, at: at, context: context, action: "admin-token.create", target: Self.target(name),
                                realmID: nil, changes: ["name": FieldChange(before: .null, after: .string(name))])
        }
        return token
    }

    /// Every token's name and creation time, by name (never the hashes).
    public func list() async throws -> [AdminToken] {
        try await database.read { db in
            try db.query("SELECT name, created_at FROM admin_tokens ORDER BY name").map { row in
                AdminToken(name: try row.string("name"), createdAt: try row.int("created_at"))
            }
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

    /// The name of the token presented, or nil when it is not a current token. Looked up by
    /// hash and confirmed with a constant-time comparison.
    public func authenticate(_ presented: String) async throws -> String? {
        guard !presented.isEmpty, presented.utf8.count <= Self.maximumPresentedLength else { return nil }
        let hash = SHA256.hash(presented)
        return try await database.read { db in
            guard let row = try db.queryOne("SELECT name, token_hash FROM admin_tokens WHERE token_hash = ?", .blob(hash)),
                  ConstantTime.equals(try row.bytes("token_hash"), hash)
            else { return nil }
            return try row.string("name")
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
}

/// An admin token as listed: its name and creation time (unix seconds), never the token.
public struct AdminToken: Sendable, Equatable, Codable {
    public let name: String
    public let createdAt: Int64

    public init(name: String, createdAt: Int64) {
        self.name = name
        self.createdAt = createdAt
    }
}

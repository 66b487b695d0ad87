import Storage

/// A session as the admin API lists it: never a token.
public struct SessionInfo: Sendable, Equatable, Codable {
    public let id: String
    public let clientId: String
    public let scope: [String]
    public let createdAt: Int64
    public let expiresAt: Int64
    public let lastRefreshedAt: Int64?
    /// When the session ends unless refreshed before (idle timeout); nil: no idle timeout.
    public let idleExpiresAt: Int64?
    public let revokedAt: Int64?

    init(row: Row) throws {
        id = try row.string("id")
        clientId = try row.string("client_id")
        scope = try row.string("scope").split(separator: " ").map(String.init)
        createdAt = try row.int("created_at")
        expiresAt = try row.int("expires_at")
        lastRefreshedAt = try row.optionalInt("last_refreshed_at")
        idleExpiresAt = try row.optionalInt("idle_expires_at")
        revokedAt = try row.optionalInt("revoked_at")
    }

    private enum CodingKeys: String, CodingKey { case id, clientId, scope, createdAt, expiresAt, lastRefreshedAt, idleExpiresAt, revokedAt }

    /// Written out so absent times are `null`, not absent keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(scope, forKey: .scope)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(lastRefreshedAt, forKey: .lastRefreshedAt)
        try container.encode(idleExpiresAt, forKey: .idleExpiresAt)
        try container.encode(revokedAt, forKey: .revokedAt)
    }
}

/// A realm's Sign in with Google configuration, as stored and read: which OAuth client ids'
/// ID tokens the realm accepts, and optionally the one Google Workspace domain they must carry.
public struct GoogleProviderConfig: Sendable, Equatable, Codable {
    /// At least one client id: a realm with none could accept no Google token.
    public static let minClientIds = 1
    /// At most this many client ids per realm (a web, an Android and an iOS client per app,
    /// for a handful of apps).
    public static let maxClientIds = 20

    public var realmId: String
    public var enabled: Bool
    /// The OAuth client ids (web, Android, iOS) whose ID tokens are accepted: the `aud` a Google
    /// ID token must carry; exact, case-sensitive.
    public var clientIds: [String]
    /// When set, only accounts of this Google Workspace domain are accepted (the token's `hd`
    /// claim); lower-case. Nil: any Google account.
    public var hostedDomain: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(realmId: String, enabled: Bool, clientIds: [String], hostedDomain: String?, createdAt: Int64,
                updatedAt: Int64) {
        self.realmId = realmId
        self.enabled = enabled
        self.clientIds = clientIds
        self.hostedDomain = hostedDomain
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    private enum CodingKeys: String, CodingKey {
        case realmId, enabled, clientIds, hostedDomain, createdAt, updatedAt
    }

    // Written out so an absent hosted domain is `null`, not an absent key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(realmId, forKey: .realmId)
        try container.encode(enabled, forKey: .enabled)
        try container.encode(clientIds, forKey: .clientIds)
        try container.encode(hostedDomain, forKey: .hostedDomain)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// A realm's Sign in with Apple configuration, as read: the private key itself is never
/// returned, only whether one is configured.
public struct AppleProviderConfig: Sendable, Equatable, Codable {
    /// Apple's scopes a realm may request.
    public static let knownScopes = ["name", "email"]
    /// At most this many Bundle IDs per realm.
    public static let maxAudiences = 50

    public var realmId: String
    public var enabled: Bool
    /// The Services ID: the primary audience, and the client id for web flows.
    public var clientId: String
    /// Bundle IDs whose identity tokens are accepted; exact, case-sensitive.
    public var audiences: [String]
    public var teamId: String?
    public var keyId: String?
    public var privateKeyConfigured: Bool
    public var scopes: [String]
    /// The web flow's "Return URLs" as registered for the Services ID at Apple: Herald's
    /// `…/apple/callback` as the browser reaches it. The first is the `redirect_uri` Herald sends.
    public var returnUrls: [String]
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(realmId: String, enabled: Bool, clientId: String, audiences: [String], teamId: String?, keyId: String?,
                privateKeyConfigured: Bool, scopes: [String], returnUrls: [String] = [], createdAt: Int64, updatedAt: Int64) {
        self.realmId = realmId
        self.enabled = enabled
        self.clientId = clientId
        self.audiences = audiences
        self.teamId = teamId
        self.keyId = keyId
        self.privateKeyConfigured = privateKeyConfigured
        self.scopes = scopes
        self.returnUrls = returnUrls
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Every `aud` an Apple identity token may carry for this realm: the Services ID, then the Bundle IDs.
    public var acceptedAudiences: [String] { [clientId] + audiences }

    private enum CodingKeys: String, CodingKey {
        case realmId, enabled, clientId, audiences, teamId, keyId, privateKeyConfigured, scopes, returnUrls, createdAt,
            updatedAt
    }

    // Written out so absent team and key ids are `null`, not absent keys.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(realmId, forKey: .realmId)
        try container.encode(enabled, forKey: .enabled)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(audiences, forKey: .audiences)
        try container.encode(teamId, forKey: .teamId)
        try container.encode(keyId, forKey: .keyId)
        try container.encode(privateKeyConfigured, forKey: .privateKeyConfigured)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(returnUrls, forKey: .returnUrls)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

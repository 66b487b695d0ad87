import JOSE

/// A person's account in one realm. `email` is unique per realm (stored lowercased); accounts
/// created without a usable email carry a placeholder the provider can later replace.
public struct Account: Sendable, Equatable, Codable {
    public var id: String
    public var realmId: String
    public var email: String
    public var emailVerified: Bool
    /// An Apple private-relay address (`@privaterelay.appleid.com`).
    public var isPrivateEmail: Bool
    public var name: PersonName
    /// The profile photo's URL a provider gave (Google's `picture`); an absolute `https` URL
    /// (`InputRules.pictureURLProblem`), nil when no provider gave one (Apple never does).
    public var pictureURL: String?
    public var status: AccountStatus
    public var createdAt: Int64
    public var updatedAt: Int64

    public init(id: String, realmId: String, email: String, emailVerified: Bool, isPrivateEmail: Bool,
                name: PersonName, pictureURL: String? = nil, status: AccountStatus, createdAt: Int64,
                updatedAt: Int64) {
        self.id = id
        self.realmId = realmId
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.name = name
        self.pictureURL = pictureURL
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// `pictureURL` is `picture` in every answer, as in OIDC's claim.
    private enum CodingKeys: String, CodingKey {
        case id, realmId, email, emailVerified, isPrivateEmail, name, status, createdAt, updatedAt
        case pictureURL = "picture"
    }

    // Written out so an unknown picture is `null`, not an absent key (like the name's parts).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(realmId, forKey: .realmId)
        try container.encode(email, forKey: .email)
        try container.encode(emailVerified, forKey: .emailVerified)
        try container.encode(isPrivateEmail, forKey: .isPrivateEmail)
        try container.encode(name, forKey: .name)
        try container.encode(pictureURL, forKey: .pictureURL)
        try container.encode(status, forKey: .status)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// An account's lifecycle state. Deleted accounts never match a login again.
public enum AccountStatus: String, Sendable, Codable, CaseIterable {
    case active
    case disabled
    case deleted
}

/// A person's name as far as it is known; each part optional.
public struct PersonName: Sendable, Equatable, Codable {
    public var givenName: String?
    public var familyName: String?
    public var displayName: String?

    public init(givenName: String? = nil, familyName: String? = nil, displayName: String? = nil) {
        self.givenName = givenName
        self.familyName = familyName
        self.displayName = displayName
    }

    /// True when no part is known.
    public var isEmpty: Bool { givenName == nil && familyName == nil && displayName == nil }

    /// The display name, else "given family" from the parts known, else nil.
    public var formatted: String? {
        if let displayName { return displayName }
        let parts = [givenName, familyName].compactMap { $0 }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }

    /// The name as every answer shows it: each part present, `null` when unknown (not an
    /// absent key). `encode(to:)` writes this too, so the `Encodable` answers (admin) and the
    /// ones built as `JSONValue` (login, `/me`) cannot differ.
    public var json: JSONValue {
        func part(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        return ["givenName": part(givenName), "familyName": part(familyName), "displayName": part(displayName)]
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    /// Problems with each part (too long, control characters), named `name.givenName` etc.
    func validate(into issues: inout FieldIssues, prefix: String = "name") {
        for (key, value) in [("givenName", givenName), ("familyName", familyName), ("displayName", displayName)] {
            if let value, let problem = InputRules.textProblem(value) { issues.add("\(prefix).\(key)", problem) }
        }
    }
}

/// A provider identity linked to an account: (realm, provider, openId) is unique.
public struct Identity: Sendable, Equatable, Codable {
    public var realmId: String
    /// `apple`.
    public var provider: String
    /// The provider's subject (Apple's `sub`).
    public var openId: String
    public var accountId: String
    /// The email as the provider gave it, if any.
    public var email: String?
    public var linkedAt: Int64
    /// Whether Apple forwards mail to this identity's private relay address (Apple's
    /// `email-enabled` / `email-disabled` notifications); nil until Apple has said.
    public var emailRelayEnabled: Bool?

    public init(realmId: String, provider: String, openId: String, accountId: String, email: String?, linkedAt: Int64,
                emailRelayEnabled: Bool? = nil) {
        self.realmId = realmId
        self.provider = provider
        self.openId = openId
        self.accountId = accountId
        self.email = email
        self.linkedAt = linkedAt
        self.emailRelayEnabled = emailRelayEnabled
    }

    /// The order every list of an account's identities has: oldest link first, then provider
    /// and subject compared as bytes (SQLite's BINARY collation, whatever PostgreSQL's is).
    /// Sorted in Swift rather than by `ORDER BY`, for which SQLite built a temporary B-tree in
    /// every returning login and session refresh to order one or two rows.
    static func precedesInLinkOrder(_ first: Identity, _ second: Identity) -> Bool {
        if first.linkedAt != second.linkedAt { return first.linkedAt < second.linkedAt }
        if first.provider != second.provider { return first.provider.utf8.lexicographicallyPrecedes(second.provider.utf8) }
        return first.openId.utf8.lexicographicallyPrecedes(second.openId.utf8)
    }

    private enum CodingKeys: String, CodingKey {
        case realmId, provider, openId, accountId, email, linkedAt, emailRelayEnabled
    }

    // Written out so a missing email is `null`, not an absent key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(realmId, forKey: .realmId)
        try container.encode(provider, forKey: .provider)
        try container.encode(openId, forKey: .openId)
        try container.encode(accountId, forKey: .accountId)
        try container.encode(email, forKey: .email)
        try container.encode(linkedAt, forKey: .linkedAt)
        try container.encode(emailRelayEnabled, forKey: .emailRelayEnabled)
    }
}

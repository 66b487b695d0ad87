/// A tenant: its own policies, Apple provider, client apps, accounts and signing keys.
public struct Realm: Sendable, Equatable, Codable {
    public static let defaultAccessTokenTTL = 900
    public static let defaultRefreshTokenTTL = 2_592_000
    /// Bounds for token lifetimes, in seconds.
    public static let accessTokenTTLRange = 60...86_400
    public static let refreshTokenTTLRange = 300...31_536_000
    /// Bounds for the idle timeout; it must also not exceed the absolute refresh lifetime
    /// (longer would never take effect, so it is refused as a mistake).
    public static let refreshIdleTTLRange = 60...31_536_000

    public var id: String
    public var displayName: String
    public var enabled: Bool
    public var registrationEnabled: Bool
    public var emailLinking: EmailLinking
    public var nonceRequired: Bool
    public var accessTokenTTL: Int
    public var refreshTokenTTL: Int
    /// A session not refreshed for this long ends (seconds); nil: only `refreshTokenTTL` ends it.
    public var refreshIdleTTL: Int?
    public var loginUrl: String?
    public var signingAlgorithm: SigningAlgorithm
    public var rateLimit: RateLimit
    public var createdAt: Int64
    public var updatedAt: Int64

    /// A realm with every default, as created from just an id.
    public init(id: String, createdAt: Int64) {
        self.id = id
        displayName = id
        enabled = true
        registrationEnabled = true
        emailLinking = .verified
        nonceRequired = true
        accessTokenTTL = Self.defaultAccessTokenTTL
        refreshTokenTTL = Self.defaultRefreshTokenTTL
        refreshIdleTTL = nil
        loginUrl = nil
        signingAlgorithm = .es256
        rateLimit = RateLimit()
        self.createdAt = createdAt
        updatedAt = createdAt
    }

    private enum CodingKeys: String, CodingKey {
        case id, displayName, enabled, registrationEnabled, emailLinking, nonceRequired, accessTokenTTL
        case refreshTokenTTL, refreshIdleTTL, loginUrl, signingAlgorithm, rateLimit, createdAt, updatedAt
    }

    // Written out so a missing login URL or idle timeout is `null`, not an absent key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(displayName, forKey: .displayName)
        try container.encode(enabled, forKey: .enabled)
        try container.encode(registrationEnabled, forKey: .registrationEnabled)
        try container.encode(emailLinking, forKey: .emailLinking)
        try container.encode(nonceRequired, forKey: .nonceRequired)
        try container.encode(accessTokenTTL, forKey: .accessTokenTTL)
        try container.encode(refreshTokenTTL, forKey: .refreshTokenTTL)
        try container.encode(refreshIdleTTL, forKey: .refreshIdleTTL)
        try container.encode(loginUrl, forKey: .loginUrl)
        try container.encode(signingAlgorithm, forKey: .signingAlgorithm)
        try container.encode(rateLimit, forKey: .rateLimit)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(updatedAt, forKey: .updatedAt)
    }
}

/// Whether a provider login with a verified email may link to an existing account.
public enum EmailLinking: String, Sendable, Codable, CaseIterable {
    case verified
    case never
}

/// The algorithm of a realm's active signing key.
public enum SigningAlgorithm: String, Sendable, Codable, CaseIterable {
    case es256 = "ES256"
    case rs256 = "RS256"
    case edDSA = "EdDSA"
}

/// Failed login attempts allowed per (realm, client IP) within a sliding window.
public struct RateLimit: Sendable, Equatable, Codable {
    public static let failuresRange = 1...100_000
    public static let windowRange = 1...86_400

    public var failuresPerWindow: Int
    public var windowSeconds: Int

    public init(failuresPerWindow: Int = 20, windowSeconds: Int = 300) {
        self.failuresPerWindow = failuresPerWindow
        self.windowSeconds = windowSeconds
    }
}

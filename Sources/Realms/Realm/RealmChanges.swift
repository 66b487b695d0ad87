/// Settings an operator sets on a realm, on create or update; nil leaves a field as it is
/// (the default on create). `loginUrl` and `refreshIdleTTL` are doubly optional: `.some(nil)`
/// clears one.
public struct RealmChanges: Sendable, Equatable {
    public var displayName: String?
    public var enabled: Bool?
    public var registrationEnabled: Bool?
    public var emailLinking: EmailLinking?
    public var nonceRequired: Bool?
    public var accessTokenTTL: Int?
    public var refreshTokenTTL: Int?
    public var refreshIdleTTL: Int??
    public var loginUrl: String??
    public var signingAlgorithm: SigningAlgorithm?
    public var failuresPerWindow: Int?
    public var windowSeconds: Int?

    public init(displayName: String? = nil, enabled: Bool? = nil, registrationEnabled: Bool? = nil,
                emailLinking: EmailLinking? = nil, nonceRequired: Bool? = nil, accessTokenTTL: Int? = nil,
                refreshTokenTTL: Int? = nil, refreshIdleTTL: Int?? = nil, loginUrl: String?? = nil,
                signingAlgorithm: SigningAlgorithm? = nil, failuresPerWindow: Int? = nil, windowSeconds: Int? = nil) {
        self.displayName = displayName
        self.enabled = enabled
        self.registrationEnabled = registrationEnabled
        self.emailLinking = emailLinking
        self.nonceRequired = nonceRequired
        self.accessTokenTTL = accessTokenTTL
        self.refreshTokenTTL = refreshTokenTTL
        self.refreshIdleTTL = refreshIdleTTL
        self.loginUrl = loginUrl
        self.signingAlgorithm = signingAlgorithm
        self.failuresPerWindow = failuresPerWindow
        self.windowSeconds = windowSeconds
    }

    /// Problems with the given fields on their own (ranges, formats), by API field name.
    public func fieldIssues() -> [FieldIssue] {
        var issues = FieldIssues()
        if let displayName, let problem = InputRules.textProblem(displayName) { issues.add("displayName", problem) }
        if let accessTokenTTL, !Realm.accessTokenTTLRange.contains(accessTokenTTL) {
            issues.add("accessTokenTTL", "must be between \(Realm.accessTokenTTLRange.lowerBound) and \(Realm.accessTokenTTLRange.upperBound) seconds")
        }
        if let refreshTokenTTL, !Realm.refreshTokenTTLRange.contains(refreshTokenTTL) {
            issues.add("refreshTokenTTL", "must be between \(Realm.refreshTokenTTLRange.lowerBound) and \(Realm.refreshTokenTTLRange.upperBound) seconds")
        }
        if let refreshIdleTTL, let ttl = refreshIdleTTL, !Realm.refreshIdleTTLRange.contains(ttl) {
            issues.add("refreshIdleTTL", "must be between \(Realm.refreshIdleTTLRange.lowerBound) and \(Realm.refreshIdleTTLRange.upperBound) seconds, or null")
        }
        if let loginUrl, let url = loginUrl, let problem = InputRules.loginURLProblem(url) { issues.add("loginUrl", problem) }
        if let failuresPerWindow, !RateLimit.failuresRange.contains(failuresPerWindow) {
            issues.add("rateLimit.failuresPerWindow", "must be between \(RateLimit.failuresRange.lowerBound) and \(RateLimit.failuresRange.upperBound)")
        }
        if let windowSeconds, !RateLimit.windowRange.contains(windowSeconds) {
            issues.add("rateLimit.windowSeconds", "must be between \(RateLimit.windowRange.lowerBound) and \(RateLimit.windowRange.upperBound) seconds")
        }
        return issues.all
    }

    /// The realm with these changes applied, or every field problem found (including a
    /// refresh lifetime that would end up shorter than the access lifetime, or an idle timeout
    /// outside access lifetime … refresh lifetime).
    public func applied(to realm: Realm) throws(RealmsError) -> Realm {
        var issues = FieldIssues()
        issues.merge(fieldIssues())
        var result = realm
        if let displayName { result.displayName = displayName }
        if let enabled { result.enabled = enabled }
        if let registrationEnabled { result.registrationEnabled = registrationEnabled }
        if let emailLinking { result.emailLinking = emailLinking }
        if let nonceRequired { result.nonceRequired = nonceRequired }
        if let accessTokenTTL { result.accessTokenTTL = accessTokenTTL }
        if let refreshTokenTTL { result.refreshTokenTTL = refreshTokenTTL }
        if let refreshIdleTTL { result.refreshIdleTTL = refreshIdleTTL }
        if let loginUrl { result.loginUrl = loginUrl }
        if let signingAlgorithm { result.signingAlgorithm = signingAlgorithm }
        if let failuresPerWindow { result.rateLimit.failuresPerWindow = failuresPerWindow }
        if let windowSeconds { result.rateLimit.windowSeconds = windowSeconds }
        if issues.isEmpty, result.refreshTokenTTL < result.accessTokenTTL {
            issues.add("refreshTokenTTL", "must not be shorter than accessTokenTTL")
        }
        if issues.isEmpty, let idle = result.refreshIdleTTL {
            // Shorter than an access token's life, an app that refreshes when its access token
            // runs out (as apps do) would find its session idle-expired while in use.
            if idle < result.accessTokenTTL {
                issues.add("refreshIdleTTL", "must not be shorter than accessTokenTTL")
            } else if idle > result.refreshTokenTTL {
                issues.add("refreshIdleTTL", "must not be longer than refreshTokenTTL")
            }
        }
        try issues.throwIfAny()
        return result
    }
}

/// Settings an operator sets on a client app, on create or update; nil leaves a field as it
/// is (the default on create). TTL overrides are doubly optional: `.some(nil)` clears one.
public struct ClientAppChanges: Sendable, Equatable {
    public var name: String?
    public var firstParty: Bool?
    public var confidential: Bool?
    public var redirectUris: [String]?
    public var allowedScopes: [String]?
    public var enabled: Bool?
    public var ipBinding: Bool?
    public var accessTokenTTL: Int??
    public var refreshTokenTTL: Int??
    public var refreshIdleTTL: Int??

    public init(name: String? = nil, firstParty: Bool? = nil, confidential: Bool? = nil, redirectUris: [String]? = nil,
                allowedScopes: [String]? = nil, enabled: Bool? = nil, ipBinding: Bool? = nil,
                accessTokenTTL: Int?? = nil, refreshTokenTTL: Int?? = nil, refreshIdleTTL: Int?? = nil) {
        self.name = name
        self.firstParty = firstParty
        self.confidential = confidential
        self.redirectUris = redirectUris
        self.allowedScopes = allowedScopes
        self.enabled = enabled
        self.ipBinding = ipBinding
        self.accessTokenTTL = accessTokenTTL
        self.refreshTokenTTL = refreshTokenTTL
        self.refreshIdleTTL = refreshIdleTTL
    }

    /// Problems with the given fields on their own, by API field name (`redirectUris[2]`).
    public func fieldIssues() -> [FieldIssue] {
        var issues = FieldIssues()
        if let name, let problem = InputRules.textProblem(name) { issues.add("name", problem) }
        if let redirectUris {
            if redirectUris.count > ClientApp.maxRedirectURIs {
                issues.add("redirectUris", "must have at most \(ClientApp.maxRedirectURIs) entries")
            }
            for (index, uri) in redirectUris.enumerated() {
                if let problem = InputRules.redirectURIProblem(uri) {
                    issues.add("redirectUris[\(index)]", problem)
                } else if redirectUris[..<index].contains(uri) {
                    issues.add("redirectUris[\(index)]", "is a duplicate")
                }
            }
        }
        if let allowedScopes {
            if allowedScopes.count > ClientApp.maxScopes {
                issues.add("allowedScopes", "must have at most \(ClientApp.maxScopes) entries")
            }
            for (index, scope) in allowedScopes.enumerated() {
                if let problem = InputRules.scopeProblem(scope) {
                    issues.add("allowedScopes[\(index)]", problem)
                } else if allowedScopes[..<index].contains(scope) {
                    issues.add("allowedScopes[\(index)]", "is a duplicate")
                }
            }
        }
        if let accessTokenTTL, let ttl = accessTokenTTL, !Realm.accessTokenTTLRange.contains(ttl) {
            issues.add("accessTokenTTL", "must be between \(Realm.accessTokenTTLRange.lowerBound) and \(Realm.accessTokenTTLRange.upperBound) seconds, or null")
        }
        if let refreshTokenTTL, let ttl = refreshTokenTTL, !Realm.refreshTokenTTLRange.contains(ttl) {
            issues.add("refreshTokenTTL", "must be between \(Realm.refreshTokenTTLRange.lowerBound) and \(Realm.refreshTokenTTLRange.upperBound) seconds, or null")
        }
        if let refreshIdleTTL, let ttl = refreshIdleTTL, !Realm.refreshIdleTTLRange.contains(ttl) {
            issues.add("refreshIdleTTL", "must be between \(Realm.refreshIdleTTLRange.lowerBound) and \(Realm.refreshIdleTTLRange.upperBound) seconds, or null")
        }
        return issues.all
    }

    /// The client with these changes applied, or every field problem found (including an idle
    /// timeout shorter than the client's own access lifetime or longer than its own refresh
    /// lifetime; against the realm's lifetimes it is not checked, as they may change later:
    /// sessions then get access tokens capped at the idle timeout, and an idle timeout longer
    /// than the refresh lifetime simply never takes effect).
    public func applied(to client: ClientApp) throws(RealmsError) -> ClientApp {
        let issues = fieldIssues()
        if !issues.isEmpty { throw RealmsError.invalid(issues) }
        var result = client
        if let name { result.name = name }
        if let firstParty { result.firstParty = firstParty }
        if let confidential { result.confidential = confidential }
        if let enabled { result.enabled = enabled }
        if let ipBinding { result.ipBinding = ipBinding }
        if let redirectUris { result.redirectUris = redirectUris }
        if let allowedScopes { result.allowedScopes = allowedScopes }
        if let accessTokenTTL { result.accessTokenTTL = accessTokenTTL }
        if let refreshTokenTTL { result.refreshTokenTTL = refreshTokenTTL }
        if let refreshIdleTTL { result.refreshIdleTTL = refreshIdleTTL }
        if let idle = result.refreshIdleTTL {
            if let access = result.accessTokenTTL, idle < access {
                throw RealmsError.invalid([FieldIssue(field: "refreshIdleTTL", reason: "must not be shorter than accessTokenTTL")])
            }
            if let lifetime = result.refreshTokenTTL, idle > lifetime {
                throw RealmsError.invalid([FieldIssue(field: "refreshIdleTTL", reason: "must not be longer than refreshTokenTTL")])
            }
        }
        return result
    }
}

/// The Google provider as an operator writes it (PUT): the whole configuration, with defaults
/// for what is left out (enabled; no hosted domain).
public struct GoogleProviderSettings: Sendable, Equatable {
    public var enabled: Bool?
    public var clientIds: [String]?
    /// The Google Workspace domain accounts must belong to; nil: any Google account.
    public var hostedDomain: String?

    public init(enabled: Bool? = nil, clientIds: [String]? = nil, hostedDomain: String? = nil) {
        self.enabled = enabled
        self.clientIds = clientIds
        self.hostedDomain = hostedDomain
    }

    /// The validated settings.
    struct Validated: Sendable {
        let enabled: Bool
        let clientIds: [String]
        let hostedDomain: String?
    }

    /// Problems with the given fields, by API field name.
    public func fieldIssues() -> [FieldIssue] {
        do {
            _ = try validated()
            return []
        } catch {
            return error.fieldIssues
        }
    }

    /// Checks every field; throws `invalidInput` naming each bad field.
    func validated() throws(RealmsError) -> Validated {
        var issues = FieldIssues()
        let clientIds = self.clientIds ?? []
        let bounds = GoogleProviderConfig.minClientIds...GoogleProviderConfig.maxClientIds
        if self.clientIds == nil {
            issues.add("clientIds", "is required")
        } else if !bounds.contains(clientIds.count) {
            issues.add("clientIds", "must have \(bounds.lowerBound) to \(bounds.upperBound) entries")
        }
        for (index, clientId) in clientIds.enumerated() {
            if let problem = InputRules.googleClientIDProblem(clientId) {
                issues.add("clientIds[\(index)]", problem)
            } else if clientIds[..<index].contains(clientId) {
                issues.add("clientIds[\(index)]", "is a duplicate")
            }
        }
        if let hostedDomain, let problem = InputRules.domainNameProblem(hostedDomain) {
            issues.add("hostedDomain", problem)
        }
        try issues.throwIfAny()
        return Validated(enabled: enabled ?? true, clientIds: clientIds, hostedDomain: hostedDomain)
    }
}

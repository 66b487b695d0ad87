/// Which realms an admin token reaches.
public enum AdminScope: Sendable, Equatable {
    /// Every realm, present and future (every token created before scopes existed).
    case allRealms
    /// Only these realms (never empty: a token that reaches nothing is refused at creation).
    case realms(Set<String>)

    /// Whether realm `realmID` is visible to the token.
    public func includes(_ realmID: String) -> Bool {
        switch self {
        case .allRealms: true
        case .realms(let ids): ids.contains(realmID)
        }
    }

    /// The realms of a scoped token, nil for all realms (the filter lists apply).
    public var realmIDs: Set<String>? {
        switch self {
        case .allRealms: nil
        case .realms(let ids): ids
        }
    }

    /// The realms sorted, for audit records and responses; nil for all realms.
    public var sortedRealmIDs: [String]? { realmIDs?.sorted() }
}

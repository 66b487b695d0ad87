import JOSE

/// One recorded admin change: when, who (admin token name), what action on which target,
/// the operator's reason, and the before/after values of each changed field (secrets redacted).
public struct AuditEntry: Sendable, Equatable, Codable {
    public let id: Int64
    /// Unix seconds.
    public let at: Int64
    public let actor: String
    /// `realm.create`, `client.secret.rotate`, `account.delete`, …
    public let action: String
    /// The resource as an admin path: `realms/acme/clients/web`.
    public let target: String
    public let reason: String?
    public let changes: [String: FieldChange]

    public init(id: Int64, at: Int64, actor: String, action: String, target: String, reason: String?,
                changes: [String: FieldChange]) {
        self.id = id
        self.at = at
        self.actor = actor
        self.action = action
        self.target = target
        self.reason = reason
        self.changes = changes
    }

    private enum CodingKeys: String, CodingKey { case id, at, actor, action, target, reason, changes }

    // Written out so a missing reason is `null`, not an absent key.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(at, forKey: .at)
        try container.encode(actor, forKey: .actor)
        try container.encode(action, forKey: .action)
        try container.encode(target, forKey: .target)
        try container.encode(reason, forKey: .reason)
        try container.encode(changes, forKey: .changes)
    }
}

/// A field's value before and after a change (`null` when the resource did not exist).
public struct FieldChange: Sendable, Equatable, Codable {
    public let before: JSONValue
    public let after: JSONValue

    public init(before: JSONValue, after: JSONValue) {
        self.before = before
        self.after = after
    }

    /// A secret that was set or replaced: the audit shows that it changed, never the value.
    public static let redactedSecret = FieldChange(before: .string(AuditDiff.redacted), after: .string(AuditDiff.redacted))
}

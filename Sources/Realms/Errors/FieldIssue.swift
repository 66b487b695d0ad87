/// One invalid input field: its name as the API spells it (`redirectUris[2]`,
/// `rateLimit.windowSeconds`) and why it was refused. Reasons never echo the value.
public struct FieldIssue: Sendable, Equatable, Codable {
    public let field: String
    public let reason: String

    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }
}

/// Collects field issues while validating, so one response can name every bad field.
public struct FieldIssues: Sendable {
    public private(set) var all: [FieldIssue] = []

    public init() {}

    /// Records an issue unless that field already has one (the first reason is the useful one).
    public mutating func add(_ field: String, _ reason: String) {
        guard !all.contains(where: { $0.field == field }) else { return }
        all.append(FieldIssue(field: field, reason: reason))
    }

    /// Adds every issue of a list (e.g. a caught error's `fieldIssues`).
    public mutating func merge(_ issues: [FieldIssue]) {
        for issue in issues { add(issue.field, issue.reason) }
    }

    public var isEmpty: Bool { all.isEmpty }

    /// Throws `RealmsError.invalid` when any issue was recorded.
    public func throwIfAny() throws(RealmsError) {
        if !all.isEmpty { throw RealmsError.invalid(all) }
    }
}

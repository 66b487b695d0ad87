/// An error raised by the Realms module. `message` is safe to show an operator: it never
/// holds a secret, token, private key or email.
public struct RealmsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, stable for callers to switch on.
    public enum Code: Sendable, Equatable {
        /// The input failed validation; `fieldIssues` names every bad field.
        case invalidInput
        /// The realm, client, account or token does not exist.
        case notFound
        /// The change collides with existing state (duplicate id, email already taken …).
        case conflict
    }

    public let code: Code
    public let message: String
    /// One entry per invalid field (only for `.invalidInput`).
    public let fieldIssues: [FieldIssue]

    public init(code: Code, message: String, fieldIssues: [FieldIssue] = []) {
        self.code = code
        self.message = message
        self.fieldIssues = fieldIssues
    }

    /// Invalid input naming the fields.
    public static func invalid(_ issues: [FieldIssue]) -> RealmsError {
        let names = issues.map(\.field).joined(separator: ", ")
        return RealmsError(code: .invalidInput, message: "Invalid fields: \(names)", fieldIssues: issues)
    }

    /// Invalid input on one field.
    public static func invalid(field: String, _ reason: String) -> RealmsError {
        invalid([FieldIssue(field: field, reason: reason)])
    }

    /// A missing resource, named by kind ("realm", "client", "account", "admin token").
    public static func notFound(_ what: String) -> RealmsError {
        RealmsError(code: .notFound, message: "\(what.prefix(1).uppercased() + what.dropFirst()) not found")
    }

    /// A conflicting change.
    public static func conflict(_ message: String) -> RealmsError {
        RealmsError(code: .conflict, message: message)
    }

    public var description: String { "RealmsError(\(code)): \(message)" }
}

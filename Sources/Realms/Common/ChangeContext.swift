/// Who makes an admin change and why: the audit actor (admin token name, or "cli") and the
/// optional `X-Change-Reason`, validated on construction.
public struct ChangeContext: Sendable, Equatable {
    public let actor: String
    public let reason: String?

    /// Throws `invalidInput` (field `X-Change-Reason`) for an over-long or control-character reason.
    public init(actor: String, reason: String? = nil) throws(RealmsError) {
        if let reason, let problem = InputRules.reasonProblem(reason) {
            throw RealmsError.invalid(field: "X-Change-Reason", problem)
        }
        self.actor = actor
        self.reason = reason.flatMap { $0.isEmpty ? nil : $0 }
    }
}

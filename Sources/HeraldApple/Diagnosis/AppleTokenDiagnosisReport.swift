import JOSE
import ProviderKeys

/// The diagnosis of one token: decoded header and claims (never the signature), every check,
/// and the verdict.
public struct AppleTokenDiagnosisReport: TokenDiagnosisReport, Sendable {
    /// The decoded JOSE header, when the token could be parsed.
    public let header: [String: JSONValue]?
    /// The decoded claims, when the token could be parsed. May include the email: this is the
    /// operator's own terminal output, never a log line.
    public let claims: [String: JSONValue]?
    /// Every check in order, including skipped ones.
    public let checks: [AppleCheckStep]
    /// What the verifier would answer (without replay protection).
    public let result: AppleVerificationResult

    public var outcome: TokenDiagnosisOutcome {
        switch result {
        case .verified: .valid
        case .rejected(let reason): .rejected(reason: reason.rawValue)
        case .tooLarge: .rejected(reason: AppleRejectionReason.malformed.rawValue)
        case .unavailable: .unavailable(provider: "apple")
        }
    }

    /// `{"checks":[{"detail","name","passed"}…],"claims":…,"header":…,"reason","verdict"}`,
    /// written by JOSE's one JSON writer (sorted keys), indented two spaces for a terminal. A
    /// failed check also carries `reason`; a skipped one has `"passed": null, "skipped": true`.
    public func json() -> String {
        let checkValues: [JSONValue] = checks.map { step in
            var members: [String: JSONValue] = ["name": .string(step.name.rawValue), "detail": .string(step.outcome.detail)]
            switch step.outcome {
            case .passed:
                members["passed"] = .bool(true)
            case .failed(let reason, _):
                members["passed"] = .bool(false)
                members["reason"] = .string(reason.rawValue)
            case .skipped:
                members["passed"] = .null
                members["skipped"] = .bool(true)
            }
            return .object(members)
        }
        return TokenDiagnosisJSON.render(header: header, claims: claims, checks: checkValues, verdict: verdict,
                                         reason: reason)
    }
}

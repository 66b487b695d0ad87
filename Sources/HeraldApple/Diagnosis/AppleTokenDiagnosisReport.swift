import JOSE
import ProviderKeys

/// The diagnosis of one token: decoded header and claims (never the signature), every check,
/// and the verdict.
public struct AppleTokenDiagnosisReport: Sendable {
    /// The decoded JOSE header, when the token could be parsed.
    public let header: [String: JSONValue]?
    /// The decoded claims, when the token could be parsed. May include the email: this is the
    /// operator's own terminal output, never a log line.
    public let claims: [String: JSONValue]?
    /// Every check in order, including skipped ones.
    public let checks: [AppleCheckStep]
    /// What the verifier would answer (without replay protection).
    public let result: AppleVerificationResult

    /// "valid" or "rejected" (an unavailable JWKS also reads "rejected", with reason `apple_unavailable`).
    public var verdict: String {
        if case .verified = result { return "valid" }
        return "rejected"
    }

    /// nil when valid; a contract rejection reason; or "apple_unavailable".
    public var reason: String? {
        switch result {
        case .verified: nil
        case .rejected(let reason): reason.rawValue
        case .tooLarge: AppleRejectionReason.malformed.rawValue
        case .unavailable: "apple_unavailable"
        }
    }

    /// The exit status of `herald diagnose apple-token`: 0 valid, 1 rejected, 3 JWKS unavailable.
    public var exitCode: Int32 {
        switch result {
        case .verified: 0
        case .rejected, .tooLarge: 1
        case .unavailable: 3
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

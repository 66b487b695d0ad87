import JOSE

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

    /// `{"header":…,"claims":…,"checks":[{"name","passed","detail"}…],"verdict","reason"}`, indented.
    /// A failed check also carries `reason`; a skipped one has `"passed": null, "skipped": true`.
    public func json() -> String {
        let checkNodes: [JSONText.Node] = checks.map { step in
            var members: [(String, JSONText.Node)] = [("name", .value(.string(step.name.rawValue)))]
            switch step.outcome {
            case .passed:
                members.append(("passed", .value(.bool(true))))
            case .failed(let reason, _):
                members.append(("passed", .value(.bool(false))))
                members.append(("reason", .value(.string(reason.rawValue))))
            case .skipped:
                members.append(("passed", .value(.null)))
                members.append(("skipped", .value(.bool(true))))
            }
            members.append(("detail", .value(.string(step.outcome.detail))))
            return .object(members)
        }
        let root: JSONText.Node = .object([
            ("header", .value(header.map(JSONValue.object) ?? .null)),
            ("claims", .value(claims.map(JSONValue.object) ?? .null)),
            ("checks", .array(checkNodes)),
            ("verdict", .value(.string(verdict))),
            ("reason", .value(reason.map(JSONValue.string) ?? .null)),
        ])
        return JSONText.render(root)
    }
}

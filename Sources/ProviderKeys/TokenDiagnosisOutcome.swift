/// What `herald diagnose <provider>-token` concluded, in the words every provider's report
/// uses: its `verdict`, `reason` and exit status follow from it (`TokenDiagnosisReport`).
public enum TokenDiagnosisOutcome: Sendable, Equatable {
    case valid
    /// A contract rejection reason (`details.reason` of a refused login).
    case rejected(reason: String)
    /// The provider's keys could not be fetched.
    case unavailable(provider: String)
}

/// A provider's diagnosis report, which says what it concluded.
public protocol TokenDiagnosisReport {
    var outcome: TokenDiagnosisOutcome { get }
}

extension TokenDiagnosisReport {
    /// "valid" or "rejected" (unreachable keys also read "rejected", reason `<provider>_unavailable`).
    public var verdict: String { outcome == .valid ? "valid" : "rejected" }

    /// nil when valid; a contract rejection reason; or "<provider>_unavailable".
    public var reason: String? {
        switch outcome {
        case .valid: nil
        case .rejected(let reason): reason
        case .unavailable(let provider): "\(provider)_unavailable"
        }
    }

    /// The command's exit status: 0 valid, 1 rejected, 3 the provider's keys unavailable.
    public var exitCode: Int32 {
        switch outcome {
        case .valid: 0
        case .rejected: 1
        case .unavailable: 3
        }
    }
}

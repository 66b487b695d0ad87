/// What one check concluded, in the style of swift-certificates' policy results: checks return
/// a value naming their reason instead of throwing.
public enum AppleCheckOutcome: Sendable, Equatable {
    /// The check passed; the detail says what was established.
    case passed(detail: AppleCheckDetail)
    /// The check failed with the contract reason; the detail says why.
    case failed(AppleRejectionReason, detail: String)
    /// The check was not run (an earlier step made it impossible, or it does not apply here).
    case skipped(detail: String)

    /// The human-readable explanation, never containing a token, raw nonce or email.
    public var detail: String {
        switch self {
        case .passed(let detail): detail.text
        case .failed(_, let detail), .skipped(let detail): detail
        }
    }

    /// The rejection reason when the check failed.
    public var failureReason: AppleRejectionReason? {
        if case .failed(let reason, _) = self { return reason }
        return nil
    }
}

/// What a passing check established, worded only when read (`herald diagnose`): every login
/// passes its checks and verification never reads their details, while wording them (times,
/// quoted kids) was ≈ 2 % of a login's CPU (issue #39). A failure's detail is worded at once.
public struct AppleCheckDetail: Sendable, Equatable, ExpressibleByStringLiteral {
    private enum Wording {
        case text(String)
        case deferred(@Sendable () -> String)
    }

    private let wording: Wording

    /// A detail worded by `wording` when it is read.
    init(_ wording: @escaping @Sendable () -> String) {
        self.wording = .deferred(wording)
    }

    public init(stringLiteral text: String) {
        wording = .text(text)
    }

    /// The human-readable explanation.
    public var text: String {
        switch wording {
        case .text(let text): text
        case .deferred(let wording): wording()
        }
    }

    public static func == (lhs: AppleCheckDetail, rhs: AppleCheckDetail) -> Bool { lhs.text == rhs.text }
}

/// One named check and its outcome, in verification order.
public struct AppleCheckStep: Sendable, Equatable {
    /// The check's name as printed by `herald diagnose apple-token`.
    public let name: AppleCheckName
    /// What it concluded.
    public let outcome: AppleCheckOutcome

    /// Creates a step.
    public init(name: AppleCheckName, outcome: AppleCheckOutcome) {
        self.name = name
        self.outcome = outcome
    }
}

/// The checks of CONTRACT.md, in the order they run.
public enum AppleCheckName: String, Sendable, CaseIterable {
    case structure          // → malformed
    case algorithm          // → algorithm
    case key                // → unknown_key
    case signature          // → signature
    case issuer             // → issuer
    case audience           // → audience
    case expiry             // → expired
    case issuedAt = "issued_at" // → not_yet_valid (also nbf when present)
    case nonce              // → nonce
    case replay             // → replayed
}

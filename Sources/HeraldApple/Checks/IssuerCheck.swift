/// `iss` is exactly Apple's issuer.
struct IssuerCheck {
    static let appleIssuer = "https://appleid.apple.com"
    private static let passed = AppleCheckDetail(stringLiteral: "iss is \(appleIssuer)")

    func evaluate(issuer: String?) -> AppleCheckOutcome {
        guard let issuer else { return .failed(.issuer, detail: "claim iss is missing") }
        if issuer == Self.appleIssuer { return .passed(detail: Self.passed) }
        return .failed(.issuer, detail: "iss \(AlgorithmCheck.quoted(issuer)) is not \(Self.appleIssuer)")
    }
}

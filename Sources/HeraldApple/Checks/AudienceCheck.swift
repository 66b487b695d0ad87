/// `aud` (a string or an array) intersects the realm's audiences; exact, case-sensitive match.
struct AudienceCheck {
    let accepted: Set<String>

    /// The outcome and, on success, the first token audience the realm accepts.
    func evaluate(audiences: [String]) -> (AppleCheckOutcome, String?) {
        guard !audiences.isEmpty else { return (.failed(.audience, detail: "claim aud is missing or empty"), nil) }
        if let match = audiences.first(where: accepted.contains) {
            return (.passed(detail: AppleCheckDetail { "aud \(AlgorithmCheck.quoted(match)) is accepted" }), match)
        }
        let shown = audiences.prefix(5).map(AlgorithmCheck.quoted).joined(separator: ", ")
        return (.failed(.audience, detail: "aud [\(shown)] does not intersect the \(accepted.count) accepted audience(s)"), nil)
    }
}

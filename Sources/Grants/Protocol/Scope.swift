/// OAuth scope strings: space-delimited, case-sensitive tokens (RFC 6749 §3.3).
public enum Scope {
    /// The scope granted when /authorize names none.
    public static let defaultScope = ["openid"]

    /// Splits a scope parameter into distinct tokens in order; nil when a token has characters
    /// outside %x21 / %x23-5B / %x5D-7E.
    public static func parse(_ text: String) -> [String]? {
        var tokens: [String] = []
        for part in text.split(separator: " ", omittingEmptySubsequences: true) {
            guard part.utf8.allSatisfy({ $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }) else {
                return nil
            }
            let token = String(part)
            if !tokens.contains(token) { tokens.append(token) }
        }
        return tokens
    }

    /// The scope parameter form of `tokens`.
    public static func format(_ tokens: [String]) -> String { tokens.joined(separator: " ") }
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte. Strict for form
/// bodies and credentials (an unreadable one is refused), lenient for query strings, as
/// browsers are (`HTTPRequest.queryItems()`).
public enum FormDecoding {
    /// The name/value pairs of a form body in order; a field without "=" has an empty value,
    /// empty fields ("a=1&&b=2") are skipped. nil when an escape or the UTF-8 is bad.
    public static func pairs(_ bytes: [UInt8]) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for field in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = field.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]) else { return nil }
            let value = parts.count > 1 ? decode(parts[1]) : ""
            guard let value else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    /// One form-encoded component; nil on a bad escape or invalid UTF-8.
    public static func decode(_ text: some StringProtocol) -> String? {
        decode(Array(text.utf8))
    }

    /// One form-encoded component of raw bytes; nil on a bad escape or invalid UTF-8.
    static func decode(_ bytes: some Collection<UInt8>) -> String? {
        guard let decoded = PercentDecoding.bytes(bytes, plusIsSpace: true, malformed: .refuse) else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }

    /// One component of a query string, never failing: a malformed "%" escape is kept
    /// literally and invalid UTF-8 becomes U+FFFD.
    static func decodeLeniently(_ text: Substring) -> String {
        // Never nil: a malformed escape is kept rather than refused.
        let decoded = PercentDecoding.bytes(text.utf8, plusIsSpace: true, malformed: .keepLiterally) ?? Array(text.utf8)
        return String(decoding: decoded, as: UTF8.self)
    }
}

/// Builds redirect URIs carrying response parameters: values are percent-encoded, and they
/// are appended with `&` when the registered URI already has a query (RFC 6749 §3.1.2 keeps it).
public enum RedirectURI {
    /// `uri` with `parameters` added to its query, before any fragment.
    public static func appending(_ parameters: [(String, String)], to uri: String) -> String {
        var base = uri
        var fragment = ""
        if let hash = uri.firstIndex(of: "#") {
            base = String(uri[..<hash])
            fragment = String(uri[hash...])
        }
        let query = parameters.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
        guard !query.isEmpty else { return uri }
        let separator: String
        if let questionMark = base.firstIndex(of: "?") {
            separator = base.index(after: questionMark) == base.endIndex || base.hasSuffix("&") ? "" : "&"
        } else {
            separator = "?"
        }
        return base + separator + query + fragment
    }

    /// Percent-encodes everything but the unreserved set, so values survive any query parser.
    public static func encode(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            let isUnreserved = (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if isUnreserved {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

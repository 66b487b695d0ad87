import HTTPServer

extension HTTPRequest {
    /// The body's media type: `Content-Type` without its parameters, trimmed and lowercased;
    /// "" when there is none.
    var mediaType: String { Self.mediaType(of: headers["Content-Type"] ?? "") }

    /// The media type of a `Content-Type` value. Read as bytes: every JSON and form request
    /// asks, and walking Characters here was about 1 % of a login's CPU. Media types are ASCII
    /// tokens (RFC 9110 §8.3.1), so ASCII case folding is the comparison they call for.
    static func mediaType(of contentType: String) -> String {
        func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard var type = contentType.utf8.split(separator: UInt8(ascii: ";")).first else { return "" }
        while let first = type.first, isWhitespace(first) { type = type.dropFirst() }
        while let last = type.last, isWhitespace(last) { type = type.dropLast() }
        return String(decoding: type.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }
}

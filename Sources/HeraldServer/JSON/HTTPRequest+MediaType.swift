import HTTPServer

extension HTTPRequest {
    /// The body's media type: `Content-Type` without its parameters, trimmed and lowercased;
    /// "" when there is none.
    var mediaType: String { Self.mediaType(of: headers["Content-Type"] ?? "") }

    /// The media type of a `Content-Type` value.
    static func mediaType(of contentType: String) -> String {
        contentType.split(separator: ";").first.map { $0.trimmingOptionalWhitespace.lowercased() } ?? ""
    }
}

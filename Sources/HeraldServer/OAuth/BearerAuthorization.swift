import HTTPServer

/// The `Authorization: Bearer <token>` credential (RFC 6750 §2.1), shared by the admin API,
/// the session API and userinfo so all three read it alike.
enum BearerAuthorization {
    /// The token of a Bearer header (scheme case-insensitive); nil for another scheme or an
    /// empty token.
    static func token(_ header: String) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = String(parts[1].trimmingOptionalWhitespace)
        return token.isEmpty ? nil : token
    }

    /// The token of the request's Bearer `Authorization` header; nil without one.
    static func token(in request: HTTPRequest) -> String? {
        request.headers["Authorization"].flatMap(token)
    }
}

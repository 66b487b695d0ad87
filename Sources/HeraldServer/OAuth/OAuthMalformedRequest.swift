import HTTPServer
import JOSE

/// The answer to a request the HTTP layer refused as unreadable (400: a control character or
/// invalid UTF-8 in a path segment, ambiguous framing) when it was aimed at an OAuth protocol
/// endpoint. OAuth clients parse `{"error","error_description"}` there (RFC 6749 §5.2,
/// RFC 6750 §3), not Herald's envelope, so such a request gets the OAuth shape like every
/// other bad request those endpoints answer.
enum OAuthMalformedRequest {
    /// The endpoints after `/api/oauth/{realm}/` that answer in the OAuth shape.
    static let endpoints: Set<Substring> = ["authorize", "token", "revoke", "introspect", "userinfo"]

    /// Whether `path` (as sent, undecoded) has the shape `/api/oauth/{anything}/{endpoint}`.
    /// Only the realm segment is free: the router decides nothing here, because the path did
    /// not decode, so the shape is read from the raw segments.
    static func isOAuthEndpoint(_ path: String) -> Bool {
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard segments.count == 5, segments[0].isEmpty,
              Substring(segments[1]) == "api", Substring(segments[2]) == "oauth" else { return false }
        return endpoints.contains(Substring(segments[4]))
    }

    /// 400 `invalid_request`; userinfo adds its Bearer challenge (RFC 6750 §3.1). The realm is
    /// left out of the challenge: its segment is the unreadable one.
    static func response(path: String) -> HTTPResponse {
        var response = HTTPResponse.json(status: 400, JSONValue.object([
            "error": "invalid_request", "error_description": "the request could not be read"]), noStore: true)
        if path.hasSuffix("/userinfo") {
            response.headers.set("WWW-Authenticate", #"Bearer error="invalid_request""#)
        }
        return response
    }
}

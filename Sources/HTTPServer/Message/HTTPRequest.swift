/// One HTTP request as handed to a handler: the body is complete and bounded by
/// `HTTPServerConfiguration.maxBodyBytes`.
public struct HTTPRequest: Sendable {
    /// The method exactly as sent ("GET", "POST"); HEAD is not special.
    public var method: String
    /// The path without the query, still percent-encoded as received ("/api/oauth/a%20b/token").
    /// Path parameters hold the decoded segments.
    public var path: String
    /// Everything after the first "?", undecoded; nil when the target had no "?".
    public var rawQuery: String?
    /// The request's header fields.
    public var headers: HTTPHeaders
    /// The request body (empty when none was sent).
    public var body: [UInt8]
    /// The socket peer's address ("127.0.0.1", "::1").
    public var peerAddress: String
    /// The incoming X-Request-Id when valid, else a generated one; echoed on the response.
    public var requestID: String
    /// Values of the route's `:name` segments, percent-decoded; set by the router.
    public var pathParameters: [String: String]
    /// The matched route's template ("/api/oauth/:realm/token"); set by the router.
    public var routeTemplate: String?
    /// Where a handler leaves a value for this request's access-log line; set by the server
    /// for every request it routes (nil on one built elsewhere).
    var accessLogNote: AccessLogNote?

    /// A request; the server builds these, tests and in-process callers may too.
    public init(method: String, path: String, rawQuery: String? = nil, headers: HTTPHeaders = HTTPHeaders(),
                body: [UInt8] = [], peerAddress: String = "127.0.0.1", requestID: String = RequestID.generate(),
                pathParameters: [String: String] = [:], routeTemplate: String? = nil) {
        self.method = method
        self.path = path
        self.rawQuery = rawQuery
        self.headers = headers
        self.body = body
        self.peerAddress = peerAddress
        self.requestID = requestID
        self.pathParameters = pathParameters
        self.routeTemplate = routeTemplate
    }

    /// Hands `note` to this request's access-log line (`AccessLogEntry.note`), replacing what was
    /// left before; dropped when the request did not come through the server.
    public func leaveAccessLogNote(_ note: any Sendable) {
        accessLogNote?.leave(note)
    }
}

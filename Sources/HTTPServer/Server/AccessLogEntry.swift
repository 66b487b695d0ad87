/// One line of the access log, written once per answered request. It deliberately carries
/// no path, query or body, which may hold codes or tokens.
public struct AccessLogEntry: Sendable {
    /// The request method.
    public let method: String
    /// The matched route's template, or "unmatched".
    public let route: String
    /// The status sent.
    public let status: Int
    /// From the request line being read to the response being queued.
    public let durationSeconds: Double
    /// The request's X-Request-Id.
    public let requestID: String
    /// What the handler left with `HTTPRequest.leaveAccessLogNote`, untouched; nil when it left nothing.
    public let note: (any Sendable)?

    /// An entry with the given fields.
    public init(method: String, route: String, status: Int, durationSeconds: Double, requestID: String,
                note: (any Sendable)? = nil) {
        self.method = method
        self.route = route
        self.status = status
        self.durationSeconds = durationSeconds
        self.requestID = requestID
        self.note = note
    }
}

/// Renders the responses the server produces itself: 404, 405 (the server adds `Allow`),
/// 413, 414 and 431 over the configured limits, 400 for unreadable requests and 503 while
/// shutting down. (What libmicrohttpd answers on its own never reaches it: see
/// `HTTPServerConfiguration.connectionMemoryLimitBytes` and docs/security-model.md.)
public typealias ErrorResponder = @Sendable (_ status: Int, _ request: HTTPRequest) -> HTTPResponse

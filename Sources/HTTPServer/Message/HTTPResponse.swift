/// A complete response: status, headers and body. The server adds Content-Length and
/// X-Request-Id itself.
public struct HTTPResponse: Sendable {
    /// The status code; values outside 100...599 are sent as 500.
    public var status: Int
    /// Header fields to send.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: [UInt8]

    /// A response with the given status, headers and body.
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

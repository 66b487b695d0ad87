import Foundation

/// How the server binds and what it tolerates.
public struct HTTPServerConfiguration: Sendable {
    /// An IPv4 or IPv6 literal to bind ("127.0.0.1", "0.0.0.0", "::1").
    public var host: String = "127.0.0.1"
    /// The port to bind; 0 picks a free one (read it back from `HTTPServer.boundPort`).
    public var port: UInt16 = 8080
    /// libmicrohttpd's polling threads; they only parse and queue, handlers run on Swift concurrency.
    public var threadCount: Int = ProcessInfo.processInfo.activeProcessorCount
    /// Largest accepted request body; larger bodies get 413.
    public var maxBodyBytes: Int = 65_536
    /// Longest accepted request target (path and query, as sent); longer ones get 414 from the
    /// error responder.
    public var maxRequestTargetBytes: Int = 8_192
    /// Largest accepted header section, counted as name + value + 4 (": " and CRLF) per field;
    /// larger ones get 431 from the error responder.
    public var maxHeaderBytes: Int = 32_768
    /// Most header fields accepted; more get 431 from the error responder.
    public var maxHeaderCount: Int = 100
    /// Idle seconds before MHD drops a connection (a suspended one, waiting on its handler, never times out).
    public var connectionTimeoutSeconds: Int = 30
    /// Most concurrent connections overall.
    public var connectionLimit: Int = 1024
    /// Most concurrent connections from one IP address.
    public var perIPConnectionLimit: Int = 256
    /// Memory per connection (libmicrohttpd's pool) for the request line, headers and I/O
    /// buffers. It must hold a request at the three limits above with room to spare
    /// (`requestHeadBudgetBytes`), so that libmicrohttpd reads a request somewhat over them
    /// and the error responder answers it; only a request head that does not fit here at all
    /// is answered by libmicrohttpd itself (414 or 431, with its own HTML body). MHD also keeps
    /// a record per `Cookie` pair in this pool, which no limit here counts: a Cookie header of
    /// about a thousand pairs is refused by MHD (431) even within the limits.
    public var connectionMemoryLimitBytes: Int = 65_536
    /// Headers every response carries unless its handler set them: `nosniff` by default, so
    /// no browser reads a JSON or text answer as HTML or script; the application adds
    /// deployment-wide ones (HSTS behind https).
    public var defaultResponseHeaders: HTTPHeaders = ["X-Content-Type-Options": "nosniff"]
    /// How long `shutdown()` waits for in-flight handlers before cancelling them and answering 503.
    public var shutdownGracePeriodSeconds: Double = 10

    /// Where a matched request's handler starts running.
    public var handlerStart: HandlerStart = .immediate

    /// Where a handler starts. Either way it runs as a Swift Task and its connection is
    /// suspended while it awaits, so a handler that awaits something slow never holds an
    /// MHD thread.
    public enum HandlerStart: Sendable {
        /// On the MHD thread that read the request, until the handler first suspends
        /// (`Task.immediate`). A handler that answers without suspending then costs no
        /// thread hop and no suspend/resume, which is most of the server's per-request
        /// overhead; synchronous work before the first suspension holds that MHD thread.
        case immediate
        /// On Swift's cooperative pool (`Task`): MHD threads never run handler code, at
        /// the price of two thread hops per request.
        case pooled
    }

    /// The defaults above.
    public init() {}

    /// Memory a request at the target, header and header-count limits needs in libmicrohttpd's
    /// pool: the bytes themselves, MHD's record per header field (under 64 bytes in 0.9.75),
    /// and a reserve for the method, protocol version and the response's header block.
    var requestHeadBudgetBytes: Int {
        maxRequestTargetBytes + maxHeaderBytes + maxHeaderCount * 64 + 4_096
    }
}

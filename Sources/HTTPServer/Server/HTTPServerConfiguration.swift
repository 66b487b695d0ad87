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
    /// Idle seconds before MHD drops a connection (a suspended one, waiting on its handler, never times out).
    public var connectionTimeoutSeconds: Int = 30
    /// Most concurrent connections overall.
    public var connectionLimit: Int = 1024
    /// Most concurrent connections from one IP address.
    public var perIPConnectionLimit: Int = 256
    /// Memory per connection for the request line, headers and I/O buffers; a request whose
    /// headers do not fit is answered by MHD itself (431).
    public var connectionMemoryLimitBytes: Int = 32_768
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
}

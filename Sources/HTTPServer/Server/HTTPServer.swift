import Synchronization

/// A small HTTP/1.1 server over libmicrohttpd: MHD's thread pool parses and queues; each
/// matched request runs its async handler as a Swift Task, and while the handler awaits,
/// its connection is suspended, so no MHD thread waits on a handler (see
/// `HTTPServerConfiguration.handlerStart`). Every response carries X-Request-Id.
public final class HTTPServer: Sendable {
    private enum Lifecycle {
        case idle
        case running(MHDDaemon)
        case stopping(Task<Void, Never>)
        case stopped
    }

    /// After cancelled handlers are answered 503, how long the 503s get to be sent.
    private static let flushTimeout = Duration.seconds(2)

    private let configuration: HTTPServerConfiguration
    private let dispatcher: RequestDispatcher
    private let lifecycle = Mutex(Lifecycle.idle)
    private let port = Atomic<UInt16>(0)
    /// Fires once shutdown has stopped accepting connections (observed by tests).
    let stoppedAccepting = OneShotSignal()

    /// A server that will route with `router` and render its own errors with `errorResponder`.
    /// `errorResponder` and `accessLog` are called on MHD's threads, concurrently, so they
    /// must be quick and must not block; `accessLog` is called once per answered request,
    /// when its response is queued.
    public init(configuration: HTTPServerConfiguration, router: Router,
                errorResponder: @escaping ErrorResponder,
                accessLog: @escaping @Sendable (AccessLogEntry) -> Void = { _ in }) {
        self.configuration = configuration
        dispatcher = RequestDispatcher(router: router, configuration: configuration,
                                       errorResponder: errorResponder, accessLog: accessLog)
    }

    /// Binds and starts serving; throws if the address is unusable or taken, or if called twice.
    public func start() throws(HTTPServerError) {
        try lifecycle.withLock { (lifecycle) throws(HTTPServerError) in
            guard case .idle = lifecycle else {
                throw HTTPServerError(code: .alreadyStarted, message: "a server starts once")
            }
            let daemon = try MHDDaemon(configuration: configuration, dispatcher: dispatcher)
            port.store(daemon.boundPort, ordering: .releasing)
            lifecycle = .running(daemon)
        }
    }

    /// The port bound by `start()` (the chosen one when configured with 0); 0 before.
    public var boundPort: UInt16 {
        port.load(ordering: .acquiring)
    }

    /// Stops accepting connections, lets in-flight handlers finish (for at most the grace
    /// period, then cancels them and answers 503), and stops the daemon once their responses
    /// are sent. Calling it again waits for the same shutdown.
    public func shutdown() async {
        let shutdown: Task<Void, Never>? = lifecycle.withLock { lifecycle in
            switch lifecycle {
            case .idle:
                lifecycle = .stopped
                return nil
            case .running(let daemon):
                let task = Task { await self.drainAndStop(daemon) }
                lifecycle = .stopping(task)
                return task
            case .stopping(let task):
                return task
            case .stopped:
                return nil
            }
        }
        await shutdown?.value
        lifecycle.withLock { $0 = .stopped }
    }

    private func drainAndStop(_ daemon: MHDDaemon) async {
        let inFlight = dispatcher.inFlight
        inFlight.beginDraining()
        daemon.quiesce()
        stoppedAccepting.fire()
        // Capped at a day so an absurd configured value cannot overflow the conversion.
        let grace = Duration.milliseconds(Int64((min(configuration.shutdownGracePeriodSeconds, 86_400) * 1000).rounded()))
        if await !inFlight.waitUntilEmpty(timeout: grace) {
            let errorResponder = dispatcher.errorResponder
            inFlight.cancelUnanswered { errorResponder(503, $0) }
            _ = await inFlight.waitUntilEmpty(timeout: Self.flushTimeout)
        }
        daemon.stop()
    }

    /// Request states currently alive; for leak tests.
    var liveRequestCount: Int {
        dispatcher.liveRequests.load(ordering: .relaxed)
    }

    deinit {
        // Dropped without shutdown(): answer whatever is suspended (a suspended connection
        // must be resumed before MHD_stop_daemon), then stop at once.
        if case .running(let daemon) = lifecycle.withLock({ $0 }) {
            let inFlight = dispatcher.inFlight
            inFlight.beginDraining()
            let errorResponder = dispatcher.errorResponder
            inFlight.cancelUnanswered { errorResponder(503, $0) }
            daemon.stop()
        }
    }
}

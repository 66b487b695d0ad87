import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Owns one running `MHD_Daemon` and its callbacks' context: the daemon is stopped exactly
/// once, by `stop()` or at deinit, and the dispatcher the C callbacks point at (unretained)
/// is kept alive for at least as long.
final class MHDDaemon: Sendable {
    private struct Handles {
        var daemon: OpaquePointer?
        /// The listen socket handed back by MHD_quiesce_daemon; ours to close after stop.
        var quiescedSocket: Int32?
    }

    let dispatcher: RequestDispatcher
    let boundPort: UInt16
    private let handles: Mutex<Handles>

    init(configuration: HTTPServerConfiguration, dispatcher: RequestDispatcher) throws(HTTPServerError) {
        guard let address = ListenAddress(host: configuration.host, port: configuration.port) else {
            throw HTTPServerError(code: .invalidConfiguration, message: "host must be an IPv4 or IPv6 literal")
        }
        if let problem = Self.problem(with: configuration) {
            throw HTTPServerError(code: .invalidConfiguration, message: problem)
        }
        self.dispatcher = dispatcher
        let context = Unmanaged.passUnretained(dispatcher).toOpaque()

        // An internal polling thread pool on epoll; suspend/resume is what lets handlers run
        // on Swift concurrency. Error logging goes to a callback that keeps only startup
        // messages, so nothing a client sends can reach stderr.
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_EPOLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        if address.isIPv6 { flags |= MHD_USE_IPv6.rawValue }

        let daemon = address.withSockaddr { socketAddress -> OpaquePointer? in
            var options: [MHD_OptionItem] = [
                herald_MHD_option_external_logger(Self.logMessage, context),
                herald_MHD_option_pointer(.SOCK_ADDR, UnsafeMutableRawPointer(socketAddress)),
                herald_MHD_option_value(.CONNECTION_TIMEOUT, configuration.connectionTimeoutSeconds),
                herald_MHD_option_value(.CONNECTION_LIMIT, configuration.connectionLimit),
                herald_MHD_option_value(.PER_IP_CONNECTION_LIMIT, configuration.perIPConnectionLimit),
                herald_MHD_option_value(.CONNECTION_MEMORY_LIMIT, configuration.connectionMemoryLimitBytes),
                herald_MHD_option_notify_completed(Self.requestCompleted, context),
                // The raw request target (path and query) comes from the URI log callback and is
                // decoded per segment by PathSegments. MHD's own unescaping would be wasted
                // work, and would hand the fallback `url` over with "%2F" already turned into "/".
                herald_MHD_option_uri_log(Self.requestLineRead, context),
                herald_MHD_option_keep_uri_escaped(),
            ]
            // A pool of one is no pool: MHD then runs the single internal thread.
            if configuration.threadCount > 1 {
                options.append(herald_MHD_option_value(.THREAD_POOL_SIZE, configuration.threadCount))
            }
            options.append(herald_MHD_option_value(.END, 0))
            return options.withUnsafeMutableBufferPointer { items in
                herald_MHD_start_daemon(flags, configuration.port, nil, nil, Self.accessHandler, context, items.baseAddress)
            }
        }
        let messages = dispatcher.startupMessages.withLock { messages in
            defer { messages = nil }
            return messages ?? []
        }
        guard let daemon else {
            let reason = messages.isEmpty ? "libmicrohttpd refused to start" : messages.joined(separator: "; ")
            throw HTTPServerError(code: .startFailed,
                                  message: "cannot listen on \(configuration.host):\(configuration.port): \(reason)")
        }
        boundPort = herald_MHD_bound_port(daemon)
        handles = Mutex(Handles(daemon: daemon, quiescedSocket: nil))
    }

    deinit {
        stop()
    }

    /// The first unusable configuration value, described; nil when all are usable.
    private static func problem(with configuration: HTTPServerConfiguration) -> String? {
        let limit = Int(UInt32.max)
        let checks: [(Bool, String)] = [
            ((1...1024).contains(configuration.threadCount), "threadCount must be 1...1024"),
            ((0...limit).contains(configuration.connectionTimeoutSeconds), "connectionTimeoutSeconds must be >= 0"),
            ((1...limit).contains(configuration.connectionLimit), "connectionLimit must be >= 1"),
            ((1...limit).contains(configuration.perIPConnectionLimit), "perIPConnectionLimit must be >= 1"),
            ((4_096...limit).contains(configuration.connectionMemoryLimitBytes), "connectionMemoryLimitBytes must be >= 4096"),
            (configuration.maxBodyBytes >= 0, "maxBodyBytes must be >= 0"),
            (configuration.maxRequestTargetBytes >= 1, "maxRequestTargetBytes must be >= 1"),
            (configuration.maxHeaderBytes >= 1, "maxHeaderBytes must be >= 1"),
            (configuration.maxHeaderCount >= 1, "maxHeaderCount must be >= 1"),
            // Otherwise MHD answers (without the error responder) requests within the limits.
            (configuration.requestHeadBudgetBytes <= configuration.connectionMemoryLimitBytes,
             "connectionMemoryLimitBytes must be at least maxRequestTargetBytes + maxHeaderBytes"
                + " + 64 * maxHeaderCount + 4096"),
            (configuration.shutdownGracePeriodSeconds >= 0 && configuration.shutdownGracePeriodSeconds.isFinite,
             "shutdownGracePeriodSeconds must be >= 0"),
        ]
        return checks.first { !$0.0 }?.1
    }

    /// Stops accepting connections; connections already open keep being served.
    func quiesce() {
        handles.withLock { handles in
            guard let daemon = handles.daemon, handles.quiescedSocket == nil else { return }
            let socket = MHD_quiesce_daemon(daemon)
            guard socket >= 0 else { return }
            // MHD's threads may still hold the descriptor until MHD_stop_daemon, so it is only
            // closed after that; shutting it down now makes the kernel refuse new connections
            // instead of queueing them in the backlog.
            _ = Glibc.shutdown(socket, Int32(SHUT_RDWR))
            handles.quiescedSocket = socket
        }
    }

    /// Stops the daemon (joining its threads) and closes the quiesced listen socket.
    func stop() {
        handles.withLock { handles in
            if let daemon = handles.daemon {
                MHD_stop_daemon(daemon)
                handles.daemon = nil
            }
            if let socket = handles.quiescedSocket {
                _ = Glibc.close(socket)
                handles.quiescedSocket = nil
            }
        }
    }

    // MARK: - C trampolines
    // Plain closures without captures, so they convert to C function pointers and are not
    // isolated to any actor: MHD calls them on its own threads.

    private static let accessHandler: MHD_AccessHandlerCallback = {
        cls, connection, url, method, version, uploadData, uploadSize, perRequest in
        guard let cls, let connection, let uploadSize, let perRequest else { return .NO }
        let dispatcher = Unmanaged<RequestDispatcher>.fromOpaque(cls).takeUnretainedValue()
        let state: RequestState
        if let existing = perRequest.pointee {
            state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        } else {
            // The URI log callback normally creates the state; this covers a request MHD
            // presents without it, using the (unescaped-off, hence raw) URL.
            state = dispatcher.requestLineRead(target: url.map { String(cString: $0) } ?? "", byteCount: url.map { strlen($0) } ?? 0)
            perRequest.pointee = Unmanaged.passRetained(state).toOpaque()
        }
        let upload = uploadData.map { UnsafeRawBufferPointer(start: $0, count: uploadSize.pointee) }
        return dispatcher.handle(state, connection: connection, line: RequestLineParts(method: method, url: url, version: version),
                                 upload: upload, uploadSize: uploadSize)
    }

    private static let requestLineRead: herald_MHD_URILogCallback = { cls, uri, _ in
        guard let cls else { return nil }
        let dispatcher = Unmanaged<RequestDispatcher>.fromOpaque(cls).takeUnretainedValue()
        let state = dispatcher.requestLineRead(target: uri.map { String(cString: $0) } ?? "", byteCount: uri.map { strlen($0) } ?? 0)
        // Now that the target is copied, MHD is left an empty query: it would otherwise parse
        // every argument into its memory pool and hang when the pool runs out (see the shim).
        herald_MHD_skip_query_arguments(uri)
        // +1 retain owned by MHD's per-request pointer until requestCompleted releases it.
        return Unmanaged.passRetained(state).toOpaque()
    }

    private static let requestCompleted: MHD_RequestCompletedCallback = { cls, _, perRequest, _ in
        guard let cls, let perRequest, let pointer = perRequest.pointee else { return }
        perRequest.pointee = nil
        let state = Unmanaged<RequestState>.fromOpaque(pointer).takeRetainedValue()
        Unmanaged<RequestDispatcher>.fromOpaque(cls).takeUnretainedValue().requestCompleted(state)
    }

    private static let logMessage: MHD_LogCallback = { cls, format, arguments in
        guard let cls, let format else { return }
        let dispatcher = Unmanaged<RequestDispatcher>.fromOpaque(cls).takeUnretainedValue()
        dispatcher.startupMessages.withLock { messages in
            guard messages != nil else { return }
            var buffer = [CChar](repeating: 0, count: 512)
            guard let arguments else { return }
            _ = vsnprintf(&buffer, buffer.count, format, arguments)
            messages?.append(String(nulTerminated: buffer).trimmingTrailingNewlines())
        }
    }
}

private extension String {
    func trimmingTrailingNewlines() -> String {
        var text = Substring(self)
        while text.last?.isNewline == true { text = text.dropLast() }
        return String(text)
    }
}

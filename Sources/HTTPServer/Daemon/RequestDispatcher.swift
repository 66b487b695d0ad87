import CMicroHTTPD
import Synchronization

/// Turns libmicrohttpd's callbacks into `HTTPRequest`s and handler Tasks. A matched request's
/// handler runs as a Task; if it has not answered by the time it first suspends (or, when
/// pooled, by the time it is started), the connection is suspended and resumed when it
/// answers, so a slow handler never holds an MHD thread.
final class RequestDispatcher: Sendable {
    /// After the body exceeds the limit, MHD 0.9.75 refuses to queue a response until the body
    /// is fully read; this much more is read and dropped to be able to answer 413, beyond it
    /// the connection is closed without an answer.
    static let discardLimit = 1 << 20

    let router: Router
    let errorResponder: ErrorResponder
    let accessLog: @Sendable (AccessLogEntry) -> Void
    let maxBodyBytes: Int
    let maxRequestTargetBytes: Int
    let maxHeaderBytes: Int
    let maxHeaderCount: Int
    let handlerStart: HTTPServerConfiguration.HandlerStart
    let defaultResponseHeaders: HTTPHeaders
    let inFlight = InFlightRegistry()
    /// Request states alive (created, not yet released); lets tests prove none leak.
    let liveRequests = Atomic<Int>(0)
    /// MHD's error messages while starting (to explain a failed bind); nil afterwards, when
    /// messages are dropped so client behaviour never reaches a log.
    let startupMessages = Mutex<[String]?>([])

    init(router: Router, configuration: HTTPServerConfiguration,
         errorResponder: @escaping ErrorResponder, accessLog: @escaping @Sendable (AccessLogEntry) -> Void) {
        self.router = router
        maxBodyBytes = configuration.maxBodyBytes
        maxRequestTargetBytes = configuration.maxRequestTargetBytes
        maxHeaderBytes = configuration.maxHeaderBytes
        maxHeaderCount = configuration.maxHeaderCount
        handlerStart = configuration.handlerStart
        defaultResponseHeaders = configuration.defaultResponseHeaders
        self.errorResponder = errorResponder
        self.accessLog = accessLog
    }

    // MARK: - Callbacks (called on MHD threads through the C trampolines in MHDDaemon)

    /// The URI log callback: the request line was read; keep its raw target.
    func requestLineRead(target: String, byteCount: Int) -> RequestState {
        liveRequests.add(1, ordering: .relaxed)
        return RequestState(target: target, byteCount: byteCount, start: .now)
    }

    /// The request-completed callback: the response was sent or the connection closed.
    func requestCompleted(_ state: RequestState) {
        if case .dispatched(let pending) = state.phase { pending.abandon() }
        if let id = state.inFlightID { inFlight.finish(id) }
        liveRequests.subtract(1, ordering: .relaxed)
    }

    /// The access handler: called with the headers, once per body chunk, once with size 0
    /// when the body is complete, and once more after the connection is resumed.
    func handle(_ state: RequestState, connection: OpaquePointer, line: RequestLineParts,
                upload: UnsafeRawBufferPointer?, uploadSize: UnsafeMutablePointer<Int>) -> MHD_Result {
        switch state.phase {
        case .awaitingHeaders:
            return begin(state, connection: connection, line: line)
        case .receivingBody:
            guard let upload, uploadSize.pointee > 0 else { return finish(state, connection: connection) }
            uploadSize.pointee = 0
            if state.request.body.count + upload.count > maxBodyBytes {
                state.request.body = []
                state.phase = .discardingBody(dropped: upload.count)
                return .YES
            }
            state.request.body.append(contentsOf: upload)
            return .YES
        case .discardingBody(let dropped):
            guard uploadSize.pointee > 0 else { return respondWithError(413, state, connection: connection) }
            let total = dropped + uploadSize.pointee
            uploadSize.pointee = 0
            guard total <= Self.discardLimit else { return .NO }
            state.phase = .discardingBody(dropped: total)
            return .YES
        case .dispatched(let pending):
            guard let response = pending.takeResponse() else { return .YES }
            return send(response, state, connection: connection)
        case .responded:
            uploadSize.pointee = 0
            return .YES
        }
    }

    // MARK: - Request phases

    private func begin(_ state: RequestState, connection: OpaquePointer, line: RequestLineParts) -> MHD_Result {
        let method = line.method.map { String(cString: $0) } ?? ""
        let (headers, headHidesBytes) = Self.headers(of: connection, line: line, targetByteCount: state.targetByteCount)
        let target = state.target
        let path: Substring, rawQuery: String?
        // A byte search: "?" is ASCII, and a Character search would walk grapheme clusters.
        if let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = target[..<question]
            rawQuery = String(target[target.utf8.index(after: question)...])
        } else {
            path = Substring(target)
            rawQuery = nil
        }
        state.request = HTTPRequest(method: method, path: String(path), rawQuery: rawQuery, headers: headers,
                                    peerAddress: PeerAddress.of(connection),
                                    requestID: RequestID.resolve(incoming: headers[RequestID.headerName]))
        // Herald's own limits, below what MHD's memory pool holds (see
        // HTTPServerConfiguration.connectionMemoryLimitBytes), so the error responder answers
        // these instead of MHD's HTML page.
        guard target.utf8.count <= maxRequestTargetBytes else { return respondWithError(414, state, connection: connection) }
        guard headers.count <= maxHeaderCount, Self.headerBytes(headers) <= maxHeaderBytes else {
            return respondWithError(431, state, connection: connection)
        }
        // MHD hands the target and header fields over as C strings, which a raw NUL would cut
        // short: `/realms\0/../../x` would be routed as `/realms` while a proxy in front saw
        // `/x`, and `Bearer <token>\0junk` would authenticate. Refused rather than truncated.
        if headHidesBytes || line.rawTargetLength != state.targetByteCount {
            return respondWithError(400, state, connection: connection)
        }
        guard let segments = PathSegments.decode(path) else {
            return respondWithError(400, state, connection: connection)
        }
        state.segments = segments
        guard Self.hasUnambiguousFraming(headers) else { return respondWithError(400, state, connection: connection) }
        if let declared = headers["Content-Length"] {
            // Refuse an announced oversize body before reading any of it.
            guard let length = Int(declared), length >= 0 else { return respondWithError(400, state, connection: connection) }
            guard length <= maxBodyBytes else { return respondWithError(413, state, connection: connection) }
            state.request.body.reserveCapacity(length)
        }
        state.phase = .receivingBody
        return .YES
    }

    /// The header section's size as counted against `maxHeaderBytes`: name, value, ": " and CRLF.
    static func headerBytes(_ headers: HTTPHeaders) -> Int {
        headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }

    /// Whether the body's length is announced one way only (RFC 9112 §6.1, §6.3): at most one
    /// Content-Length, or Transfer-Encoding exactly `chunked` without a Content-Length. MHD
    /// reads the first of two Content-Lengths and tolerates both headers at once; a proxy in
    /// front may read the other, which is how requests are smuggled past it — so such a request
    /// is refused, and an encoding MHD cannot decode (gzip) would leave it waiting for the end.
    static func hasUnambiguousFraming(_ headers: HTTPHeaders) -> Bool {
        let lengths = headers.values("Content-Length")
        let encodings = headers.values("Transfer-Encoding")
        if encodings.isEmpty { return lengths.count <= 1 }
        // Exactly `chunked` (MHD has already dropped leading whitespace): MHD does not read
        // `chunked\t` or `chunked ` as chunked and would wait for a body that never ends.
        return lengths.isEmpty && encodings.count == 1
            && encodings[0].utf8.count == 7 && encodings[0].lowercased() == "chunked"
    }

    private func finish(_ state: RequestState, connection: OpaquePointer) -> MHD_Result {
        if inFlight.isDraining { return respondWithError(503, state, connection: connection) }
        switch router.resolve(method: state.request.method, segments: state.segments) {
        case .notFound:
            return respondWithError(404, state, connection: connection)
        case .methodNotAllowed(let allowed):
            var response = errorResponder(405, state.request)
            response.headers.set("Allow", allowed.joined(separator: ", "))
            return send(response, state, connection: connection)
        case .matched(let handler, let parameters, let template):
            state.request.pathParameters = parameters
            state.request.routeTemplate = template
            state.request.accessLogNote = AccessLogNote()
            state.route = template
            let request = state.request
            let pending = PendingResponse(request: request)
            state.phase = .dispatched(pending)
            guard let id = inFlight.register(pending) else {
                // Shutdown began between the check above and the registration.
                return respondWithError(503, state, connection: connection)
            }
            state.inFlightID = id
            let run: @Sendable () async -> Void = {
                // Shutdown may have answered 503 before a pooled Task got to run.
                guard !pending.isCompleted else { return }
                pending.complete(await handler(request))
            }
            switch handlerStart {
            case .immediate: pending.attach(Task.immediate(operation: run))
            case .pooled: pending.attach(Task(operation: run))
            }
            if let response = pending.suspendUnlessAnswered(connection) {
                return send(response, state, connection: connection)
            }
            return .YES
        }
    }

    private func respondWithError(_ status: Int, _ state: RequestState, connection: OpaquePointer) -> MHD_Result {
        send(errorResponder(status, state.request), state, connection: connection)
    }

    // MARK: - MHD plumbing

    /// Headers whose values MHD computes itself or the server owns.
    private static let managedHeaders = ["Content-Length", "Transfer-Encoding", "Date", RequestID.headerName]

    private func send(_ response: HTTPResponse, _ state: RequestState, connection: OpaquePointer) -> MHD_Result {
        state.phase = .responded
        let status = (100...599).contains(response.status) ? response.status : 500
        let created = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse = created else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in response.headers
        where !Self.managedHeaders.contains(where: { HTTPHeaders.sameName($0, name) }) {
            // MHD refuses names or values holding CR, LF or TAB; such a header is dropped
            // rather than allowed to split the response.
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        for (name, value) in defaultResponseHeaders where !response.headers.contains(name) {
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        _ = MHD_add_response_header(mhdResponse, RequestID.headerName, state.request.requestID)
        let queued = MHD_queue_response(connection, UInt32(status), mhdResponse)
        accessLog(AccessLogEntry(method: state.request.method, route: state.route, status: status,
                                 durationSeconds: Self.seconds(ContinuousClock.now - state.start),
                                 requestID: state.request.requestID, note: state.request.accessLogNote?.current))
        return queued
    }

    /// What the header iterator collects: the fields, and the scan for bytes MHD did not hand over.
    private struct ReceivedHeaders {
        var headers = HTTPHeaders()
        var scan: RequestHeadScan?
    }

    /// The request's header fields, and whether the head holds bytes MHD parsed but did not
    /// hand over (a NUL inside the method, target, version or a header field; see
    /// `RequestHeadScan`). Without a measurable head the answer is yes: refusing is safe.
    private static func headers(of connection: OpaquePointer, line: RequestLineParts,
                                targetByteCount: Int) -> (HTTPHeaders, hidesBytes: Bool) {
        var received = ReceivedHeaders()
        let headSize = herald_MHD_request_head_size(connection)
        if let method = line.method, headSize > 0 {
            var scan = RequestHeadScan(head: UnsafeRawPointer(method).assumingMemoryBound(to: UInt8.self), size: headSize)
            scan.cover(method, count: strlen(method))
            scan.cover(line.url, count: targetByteCount)
            scan.cover(line.version, count: line.version.map { strlen($0) } ?? 0)
            received.scan = scan
        }
        withUnsafeMutablePointer(to: &received) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, { cls, _, key, keySize, value, valueSize in
                guard let cls, let key else { return .YES }
                let received = cls.assumingMemoryBound(to: ReceivedHeaders.self)
                received.pointee.scan?.cover(key, count: keySize)
                received.pointee.scan?.cover(value, count: value == nil ? 0 : valueSize)
                let name = UnsafeRawBufferPointer(start: key, count: keySize)
                let content = UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize)
                received.pointee.headers.add(String(decoding: name, as: UTF8.self), String(decoding: content, as: UTF8.self))
                return .YES
            }, pointer)
        }
        received.scan?.finish()
        return (received.headers, received.scan?.foundHiddenBytes ?? true)
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

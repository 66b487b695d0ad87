/// Everything MHD's callbacks know about one request. Created when MHD reads the request
/// line (URI log callback), stored in MHD's per-request pointer (`*con_cls`) with a +1
/// retain, and released in the request-completed callback. Only MHD's thread for this
/// connection touches it, one callback at a time, so it needs no lock and is not Sendable;
/// what crosses to the handler Task is the `HTTPRequest` value and the `PendingResponse`.
final class RequestState {
    enum Phase {
        /// The request line is read; headers not yet seen by the access handler.
        case awaitingHeaders
        /// Collecting body chunks.
        case receivingBody
        /// The body outgrew the limit; chunks are read and dropped so a 413 can be sent.
        case discardingBody(dropped: Int)
        /// The handler was started; unless it answered at once, the connection is suspended
        /// until it does.
        case dispatched(PendingResponse)
        /// A response is queued.
        case responded
    }

    let start: ContinuousClock.Instant
    /// The request target exactly as sent ("/a%2Fb?x=1"), from the URI log callback.
    let target: String
    /// The target's length as a C string (up to its first NUL), before any repair of invalid UTF-8.
    let targetByteCount: Int
    var phase: Phase = .awaitingHeaders
    var request: HTTPRequest
    var segments: [String] = []
    /// The route template for the access log.
    var route = "unmatched"
    /// The in-flight registry's id, once dispatched.
    var inFlightID: UInt64?

    init(target: String, byteCount: Int, start: ContinuousClock.Instant) {
        self.target = target
        targetByteCount = byteCount
        self.start = start
        request = HTTPRequest(method: "", path: "", requestID: "")
    }
}

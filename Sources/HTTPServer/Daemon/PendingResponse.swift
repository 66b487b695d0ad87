import CMicroHTTPD
import Synchronization

/// A suspended MHD connection, passed from the MHD thread that suspended it to whichever
/// thread completes its handler.
///
/// `@unchecked Sendable` because `OpaquePointer` is not Sendable, and it is safe here: the
/// handle is only ever used to call `MHD_resume_connection`, which libmicrohttpd documents as
/// callable from any thread for a suspended connection, and `PendingResponse` guarantees
/// that call happens at most once and before the daemon is stopped.
struct SuspendedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// The hand-over point between a handler Task and the MHD thread that owns the connection.
///
/// The handler starts on the MHD thread; if it answers before its first real suspension the
/// MHD thread queues the response directly. Otherwise the MHD thread suspends the connection,
/// and the first completion stores the response and resumes it; any later one (a handler
/// finishing after shutdown already answered 503) is ignored.
final class PendingResponse: Sendable {
    private enum Connection {
        /// The handler is starting on the MHD thread, which has not suspended the connection.
        case running
        /// Suspended, waiting for the handler.
        case suspended(SuspendedConnection)
        /// Answered (resumed, or answered before suspension) or abandoned: never touch it again.
        case finished
    }

    private struct Slot {
        var connection = Connection.running
        var response: HTTPResponse?
        /// The handler's Task, for shutdown to cancel.
        var handler: Task<Void, Never>?
    }

    private let slot = Mutex(Slot())
    /// The request being answered, for shutdown to render its 503.
    let request: HTTPRequest

    init(request: HTTPRequest) {
        self.request = request
    }

    /// Stores `response` and resumes the connection if suspended, unless already answered.
    @discardableResult
    func complete(_ response: HTTPResponse) -> Bool {
        slot.withLock { slot in
            switch slot.connection {
            case .finished:
                return false
            case .running:
                // The MHD thread will find it in `suspendUnlessAnswered`.
                slot.response = response
                slot.connection = .finished
                return true
            case .suspended(let connection):
                slot.response = response
                slot.connection = .finished
                // MHD allows resuming a suspended connection from any thread. MHD never frees a
                // suspended connection before it is resumed or the daemon stops, and the server
                // answers every pending response before it stops the daemon, so the pointer is
                // valid. Resuming under the lock means whoever sees `.finished` knows the resume
                // has happened.
                MHD_resume_connection(connection.pointer)
                return true
            }
        }
    }

    /// Called on the MHD thread once the handler has started: returns the response when it is
    /// already there (queue it now, no suspension needed), else suspends the connection.
    func suspendUnlessAnswered(_ connection: OpaquePointer) -> HTTPResponse? {
        slot.withLock { slot in
            guard case .running = slot.connection else {
                defer { slot.response = nil }
                return slot.response
            }
            MHD_suspend_connection(connection)
            slot.connection = .suspended(SuspendedConnection(pointer: connection))
            return nil
        }
    }

    /// Remembers the handler's Task. If the request is already answered the Task is cancelled
    /// at once: a no-op when the handler itself answered, and the right thing when shutdown
    /// answered 503 while the handler was starting.
    func attach(_ handler: Task<Void, Never>) {
        let answered = slot.withLock { slot in
            slot.handler = handler
            if case .finished = slot.connection { return true }
            return false
        }
        if answered { handler.cancel() }
    }

    /// Cancels the handler's Task, if it was attached.
    func cancelHandler() {
        slot.withLock { $0.handler }?.cancel()
    }

    /// Whether a response was stored (or the connection abandoned).
    var isCompleted: Bool {
        slot.withLock { if case .finished = $0.connection { true } else { false } }
    }

    /// Called on the MHD thread once the connection was resumed.
    func takeResponse() -> HTTPResponse? {
        slot.withLock { slot in
            defer { slot.response = nil }
            return slot.response
        }
    }

    /// MHD finished the request: never touch the connection again.
    func abandon() {
        slot.withLock { $0.connection = .finished }
    }
}

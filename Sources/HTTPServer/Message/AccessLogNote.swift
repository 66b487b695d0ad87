import Synchronization

/// Where a handler leaves one value for its request's access-log line: the server passes it,
/// uninterpreted, as `AccessLogEntry.note`. A caller with more to say about a request than its
/// route and status says it in that one line instead of a second (Herald's login attempts).
///
/// The server gives each request it routes its own; copies of the request share it. A request
/// built elsewhere (tests, in-process callers) has none, and what is left on it is dropped.
public final class AccessLogNote: Sendable {
    private let value = Mutex<(any Sendable)?>(nil)

    init() {}

    /// Replaces what was left before.
    func leave(_ note: any Sendable) {
        value.withLock { $0 = note }
    }

    /// What was left, if anything.
    var current: (any Sendable)? {
        value.withLock { $0 }
    }
}

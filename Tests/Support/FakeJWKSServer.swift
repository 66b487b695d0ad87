import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP server standing in for `https://appleid.apple.com/auth/keys`.
///
/// Plain POSIX sockets and one thread per connection, so it can misbehave in ways a real
/// server would not let us: hang forever, stream more than the client's cap, send garbage.
/// Counts every request so tests can assert how often Herald fetched.
public final class FakeJWKSServer: Sendable {
    /// How the next requests are answered.
    public enum Behaviour: Sendable, Equatable {
        /// 200 with the current document and, when given, this `Cache-Control` value.
        case serve(cacheControl: String?)
        /// This status with a short text body.
        case status(Int)
        /// 200 with a body that is not JSON.
        case garbage
        /// 200 streaming `bytes` bytes of valid-looking JSON without a Content-Length.
        case oversize(bytes: Int)
        /// Accept the request and answer nothing until ``releaseHeldConnections()`` or ``stop()``.
        case hang
        /// Hold the request until released, then answer like `.serve(cacheControl:)`.
        case holdThenServe(cacheControl: String?)
        /// 302 to `location` (an upstream that moved, or one that tries to send Herald elsewhere).
        case redirect(location: String)
    }

    private struct State {
        var document: [UInt8]
        var behaviour: Behaviour = .serve(cacheControl: nil)
        var requestCount = 0
        var waiters = CountWaiters()
        var heldConnections = 0
        var releaseGeneration = 0
        var stopped = false
    }

    private let listener: Int32
    /// The bound port (chosen by the kernel).
    public let port: UInt16
    private let state: Mutex<State>
    private let held = NSCondition()

    /// The URL to configure as Herald's Apple JWKS URL.
    public var url: URL { URL(string: "http://127.0.0.1:\(port)/auth/keys")! }

    /// Starts listening on 127.0.0.1 with an ephemeral port.
    public init(document: [UInt8]) throws {
        state = Mutex(State(document: document))
        (listener, port) = try LoopbackListener.open()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Replaces the served JWKS document (key rotation).
    public func setDocument(_ document: [UInt8]) {
        state.withLock { $0.document = document }
    }

    /// Changes how later requests are answered.
    public func setBehaviour(_ behaviour: Behaviour) {
        state.withLock { $0.behaviour = behaviour }
    }

    /// Requests received so far.
    public var requestCount: Int { state.withLock { $0.requestCount } }

    /// Connections currently held by `.hang` / `.holdThenServe`.
    public var heldConnectionCount: Int { state.withLock { $0.heldConnections } }

    /// Suspends until at least `count` requests have arrived.
    public func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiting = state.withLock { $0.waiters.wait(until: count, count: $0.requestCount, continuation) }
            if !waiting { continuation.resume() }
        }
    }

    /// Lets every held connection go on (hung ones are closed, held ones answered).
    public func releaseHeldConnections() {
        held.lock()
        state.withLock { $0.releaseGeneration += 1 }
        held.broadcast()
        held.unlock()
    }

    /// Stops accepting and releases held connections; idempotent. The accept thread keeps the
    /// server alive until then, so tests stop it when done (a leaked one costs only a thread).
    public func stop() {
        let wasStopped = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return state.stopped
        }
        guard !wasStopped else { return }
        // shutdown wakes the thread blocked in accept(); that thread closes the descriptor, so
        // the number cannot be reused by another socket while it may still call accept() on it.
        shutdown(listener, Int32(SHUT_RDWR))
        releaseHeldConnections()
    }

    private func acceptLoop() {
        LoopbackListener.acceptConnections(on: listener) { [self] connection in
            if state.withLock({ $0.stopped }) {
                close(connection)
                return false
            }
            let thread = Thread { [self] in handle(connection) }
            thread.start()
            return true
        }
    }

    private func handle(_ connection: Int32) {
        defer { close(connection) }
        guard readRequestHead(connection) else { return }
        // The release generation is read with the count: a test that saw this request counted
        // may release at once, before this thread reaches waitForRelease. Read there, the
        // generation would already be the released one, and the connection would wait for a
        // release that never comes (the client then timed out: seen under the sanitizers).
        let (behaviour, document, ready, generation) = state.withLock {
            state -> (Behaviour, [UInt8], [CheckedContinuation<Void, Never>], Int) in
            state.requestCount += 1
            let ready = state.waiters.reached(state.requestCount)
            return (state.behaviour, state.document, ready, state.releaseGeneration)
        }
        for continuation in ready { continuation.resume() }

        switch behaviour {
        case .serve(let cacheControl):
            respond(connection, status: "200 OK", body: document, cacheControl: cacheControl)
        case .status(let code):
            respond(connection, status: "\(code) Failing", body: Array("upstream failure".utf8), cacheControl: nil)
        case .garbage:
            respond(connection, status: "200 OK", body: Array("<html>definitely not a key set".utf8), cacheControl: nil)
        case .oversize(let bytes):
            streamOversize(connection, bytes: bytes)
        case .hang:
            waitForRelease(after: generation)
        case .holdThenServe(let cacheControl):
            waitForRelease(after: generation)
            let current = state.withLock { $0.document }
            respond(connection, status: "200 OK", body: current, cacheControl: cacheControl)
        case .redirect(let location):
            respond(connection, status: "302 Found", body: [], cacheControl: nil, location: location)
        }
    }

    /// Blocks until a release later than `generation` (the one current when the request was counted).
    private func waitForRelease(after generation: Int) {
        held.lock()
        state.withLock { $0.heldConnections += 1 }
        while state.withLock({ $0.releaseGeneration == generation && !$0.stopped }) {
            held.wait()
        }
        held.unlock()
        state.withLock { $0.heldConnections -= 1 }
    }

    /// Reads until the blank line ending the request head (GET has no body).
    private func readRequestHead(_ connection: Int32) -> Bool {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 16_384 {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return false }
            received += buffer[0..<count]
            if Self.containsHeadTerminator(received) { return true }
        }
        return false
    }

    private static func containsHeadTerminator(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return true
        }
        return false
    }

    private func respond(_ connection: Int32, status: String, body: [UInt8], cacheControl: String?,
                         location: String? = nil) {
        var head = "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        if let cacheControl { head += "Cache-Control: \(cacheControl)\r\n" }
        if let location { head += "Location: \(location)\r\n" }
        head += "\r\n"
        send(connection, Array(head.utf8) + body)
    }

    private func streamOversize(_ connection: Int32, bytes: Int) {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"
        guard send(connection, Array(head.utf8) + Array("{\"keys\":[],\"padding\":\"".utf8)) else { return }
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 8192)
        var sent = 0
        while sent < bytes {
            guard send(connection, chunk) else { return }  // the client hung up at its cap
            sent += chunk.count
        }
        _ = send(connection, Array("\"}".utf8))
    }

    /// Writes everything; false when the peer went away. MSG_NOSIGNAL: no SIGPIPE for the test process.
    @discardableResult
    private func send(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                Glibc.send(connection, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }
}

/// Why the fake server could not start.
public enum FakeServerError: Error {
    case socket(Int32)
}

/// A TCP socket listening on 127.0.0.1 at a port the kernel chose: what the fake servers accept on.
enum LoopbackListener {
    /// The listening descriptor and its port.
    static func open() throws -> (descriptor: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FakeServerError.socket(errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let code = errno
            close(fd)
            throw FakeServerError.socket(code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// Hands each connection accepted on `listener` to `take` until the listener is shut down or
    /// `take` returns false (having closed the connection it was given), then closes the
    /// listener: only this thread may, since it may still be in accept() until then.
    static func acceptConnections(on listener: Int32, _ take: (Int32) -> Bool) {
        defer { close(listener) }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            guard take(connection) else { return }
        }
    }
}

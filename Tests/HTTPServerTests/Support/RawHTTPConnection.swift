import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response read off a raw socket.
struct RawResponse: Sendable {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

struct RawSocketError: Error, CustomStringConvertible {
    let description: String
    let errno: Int32
}

/// A blocking HTTP/1.1 client over a POSIX socket to 127.0.0.1, for what URLSession cannot
/// send: malformed targets, chunked uploads, several requests on one known connection.
/// Blocking, so use it only inside `RawHTTPConnection.run`, which keeps it off the
/// cooperative thread pool.
final class RawHTTPConnection {
    private let descriptor: Int32
    private var buffered: [UInt8] = []

    /// Connects to the loopback address; the descriptor is owned (and closed) by this object
    /// only once connected, so a failed connect closes it exactly once.
    init(port: UInt16, ipv6: Bool = false) throws {
        descriptor = try Self.connectedSocket(port: port, ipv6: ipv6)
    }

    private static func connectedSocket(port: UInt16, ipv6: Bool) throws -> Int32 {
        let descriptor = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RawSocketError(description: "socket failed", errno: errno) }
        // A server bug must fail the test, not hang it.
        var timeout = timeval(tv_sec: 15, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let result: Int32
        if ipv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            address.sin6_addr = in6addr_loopback
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if result != 0 {
            let code = errno
            close(descriptor)
            throw RawSocketError(description: "connect failed: \(String(cString: strerror(code)))", errno: code)
        }
        return descriptor
    }

    deinit {
        close(descriptor)
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw RawSocketError(description: "send failed", errno: errno) }
            offset += written
        }
    }

    /// Reads one response (the server always sends Content-Length). A response to HEAD has no
    /// body whatever its Content-Length says (`hasBody: false`); any body bytes the server sent
    /// anyway stay buffered and spoil the next response read.
    func readResponse(hasBody: Bool = true) throws -> RawResponse {
        let headerEnd = try readUntilHeaderEnd()
        let head = String(decoding: buffered[..<headerEnd], as: UTF8.self)
        buffered.removeFirst(headerEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw RawSocketError(description: "bad status line: \(head)", errno: 0)
        }
        let headers = lines.compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (name: String(line[..<colon]), value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        guard hasBody else { return RawResponse(status: status, headers: headers, body: []) }
        let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
        while buffered.count < length { try fill() }
        let body = Array(buffered[..<length])
        buffered.removeFirst(length)
        return RawResponse(status: status, headers: headers, body: body)
    }

    /// True when the server closed the connection (EOF or reset) without sending more; a
    /// receive timeout is not a close.
    func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, 0)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }

    private func readUntilHeaderEnd() throws -> Int {
        let marker: [UInt8] = [13, 10, 13, 10]
        while true {
            if buffered.count >= 4 {
                for index in 0...(buffered.count - 4) where buffered[index..<index + 4].elementsEqual(marker) {
                    return index
                }
            }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = recv(descriptor, &chunk, chunk.count, 0)
        guard count > 0 else { throw Self.readFailure(count: count, errno: errno, buffered: buffered.count) }
        buffered.append(contentsOf: chunk[..<count])
    }

    /// Why a read got no bytes, told apart so a failure says whether the server closed the
    /// connection, never answered within the receive timeout, or the socket itself failed.
    private static func readFailure(count: Int, errno code: Int32, buffered: Int) -> RawSocketError {
        let reason = switch (count, code) {
        case (0, _): "connection closed by the server"
        case (_, EAGAIN): "no bytes from the server within the 15 s receive timeout"
        default: "recv failed: \(String(cString: strerror(code)))"
        }
        return RawSocketError(description: "\(reason) while reading a response (\(buffered) bytes read)", errno: count == 0 ? 0 : code)
    }

    /// Runs blocking socket work on its own thread, so it never occupies one of the few
    /// cooperative threads the server's handlers need.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }

    /// One request on a fresh connection.
    static func exchange(port: UInt16, ipv6: Bool = false, _ request: String) async throws -> RawResponse {
        try await run {
            let connection = try RawHTTPConnection(port: port, ipv6: ipv6)
            try connection.send(request)
            return try connection.readResponse()
        }
    }

    /// Whether the server that listened on `port` is gone: connecting is refused or, when a
    /// server of a test running in parallel has been given the freed port since, a path only
    /// the gone server answered (`marker`) is not answered 200 there.
    static func serverIsGone(port: UInt16, marker: String) async -> Bool {
        switch await connectErrno(port: port) {
        case ECONNREFUSED:
            return true
        case 0:
            let request = "GET \(marker) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            guard let response = try? await exchange(port: port, request) else { return false }
            return response.status != 200
        default:
            return false
        }
    }

    /// The errno of connecting to `port` (0 when it connects).
    static func connectErrno(port: UInt16) async -> Int32 {
        (try? await run { () -> Int32 in
            do {
                _ = try RawHTTPConnection(port: port)
                return 0
            } catch let error as RawSocketError {
                return error.errno
            }
        }) ?? -1
    }
}

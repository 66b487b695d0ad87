import Foundation
import JOSE
#if canImport(Glibc)
import Glibc
#endif

/// A deliberately small HTTP/1.1 client over a raw socket: no redirects followed, no headers
/// added behind the test's back, and able to send bytes no polite client would.
struct TestHTTPClient: Sendable {
    let port: UInt16

    struct Response: Sendable {
        let status: Int
        let headers: [(String, String)]
        let body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        var text: String { String(decoding: body, as: UTF8.self) }
        /// The body as a JSON object (empty when it is not one).
        var json: [String: JSONValue] {
            if case .object(let object)? = try? JSONValue.parse(body) { return object }
            return [:]
        }
    }

    /// Sends one request and reads the whole response (Content-Length or close-delimited).
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        return try sendRaw(Array(head.utf8) + body)
    }

    /// JSON convenience: encodes `json` (a JSONValue object) and sets Content-Type.
    func send(_ method: String, _ path: String, json: JSONValue, headers: [(String, String)] = []) throws -> Response {
        let body = Array(try JSONEncoder().encode(json))
        return try send(method, path, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// Sends raw bytes and parses the response.
    func sendRaw(_ bytes: [UInt8]) throws -> Response {
        let socket = try connectSocket()
        defer { close(socket) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written <= 0 { break }  // the server may answer early (413) and close
            offset += written
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !TestHTTPClient.isComplete(received) {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return try TestHTTPClient.parse(received)
    }

    func connectSocket() throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw TestClientError("socket failed") }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(socket)
            throw TestClientError("connect failed")
        }
        return socket
    }

    /// Whether `bytes` hold a whole response: its head, and as many body bytes as announced.
    static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard let response = try? parse(bytes),
              let length = response.header("Content-Length").flatMap(Int.init) else { return false }
        return response.body.count >= length
    }

    static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.firstRange(of: separator) else { throw TestClientError("no response head") }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw TestClientError("bad status line") }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var body = Array(bytes[end.upperBound...])
        if let length = headers.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }) {
            body = Array(body.prefix(length))
        }
        return Response(status: status, headers: headers, body: body)
    }
}

struct TestClientError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

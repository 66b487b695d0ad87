import Testing
@testable import HTTPServer

/// The request target and header limits are enforced by the server, so its error responder
/// answers them; libmicrohttpd only answers a request head that does not fit its memory pool.
@Suite("HTTPServer request head limits")
struct ServerRequestHeadLimitTests {
    private static func routes(_ router: inout Router) {
        router.add("GET", "/head") { request in text(200, "fields \(request.headers.count)") }
    }

    private static let defaults = HTTPServerConfiguration()

    /// A GET whose header section has exactly `count` fields (Host included) and `bytes` bytes as
    /// the server counts them (name + value + 4 per field).
    private static func request(target: String = "/head", fieldCount count: Int, headerBytes bytes: Int) -> String {
        var fields = [("Host", "t")]
        for index in 1..<(count - 1) { fields.append(("X-F\(index)", "v")) }
        let used = fields.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
        let fillerName = "X-Filler"
        fields.append((fillerName, String(repeating: "f", count: bytes - used - fillerName.utf8.count - 4)))
        let head = fields.map { "\($0.0): \($0.1)\r\n" }.joined()
        return "GET \(target) HTTP/1.1\r\n\(head)\r\n"
    }

    @Test func targetOfExactlyTheLimitIsServedAndOneByteMoreIs414() async throws {
        try await withServer(routes: Self.routes) { server in
            let limit = Self.defaults.maxRequestTargetBytes
            let atLimit = "/head?q=" + String(repeating: "a", count: limit - 8)
            let served = try await RawHTTPConnection.exchange(port: server.boundPort, "GET \(atLimit) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(served.status == 200)
            let over = try await RawHTTPConnection.exchange(port: server.boundPort, "GET \(atLimit)a HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(over.status == 414)
            #expect(over.text == "error 414")
        }
    }

    @Test func headerSectionOverTheByteLimitIs431FromTheErrorResponder() async throws {
        try await withServer(routes: Self.routes) { server in
            let limit = Self.defaults.maxHeaderBytes
            let served = try await RawHTTPConnection.exchange(port: server.boundPort,
                                                              Self.request(fieldCount: 3, headerBytes: limit))
            #expect(served.status == 200)
            #expect(served.text == "fields 3")
            let over = try await RawHTTPConnection.exchange(port: server.boundPort,
                                                            Self.request(fieldCount: 3, headerBytes: limit + 1))
            #expect(over.status == 431)
            #expect(over.text == "error 431")
        }
    }

    @Test func oneHeaderFieldOverTheCountLimitIs431FromTheErrorResponder() async throws {
        try await withServer(routes: Self.routes) { server in
            let limit = Self.defaults.maxHeaderCount
            let served = try await RawHTTPConnection.exchange(port: server.boundPort,
                                                              Self.request(fieldCount: limit, headerBytes: 2_000))
            #expect(served.text == "fields \(limit)")
            let over = try await RawHTTPConnection.exchange(port: server.boundPort,
                                                            Self.request(fieldCount: limit + 1, headerBytes: 2_000))
            #expect(over.status == 431)
            #expect(over.text == "error 431")
        }
    }

    @Test func requestAtEveryLimitAtOnceFitsLibmicrohttpdsMemoryTwiceOnOneConnection() async throws {
        try await withServer(routes: Self.routes) { server in
            let limits = Self.defaults
            let target = "/head?q=" + String(repeating: "a", count: limits.maxRequestTargetBytes - 8)
            let request = Self.request(target: target, fieldCount: limits.maxHeaderCount, headerBytes: limits.maxHeaderBytes)
            let port = server.boundPort
            let statuses = try await RawHTTPConnection.run { () -> [String] in
                let connection = try RawHTTPConnection(port: port)
                return try (0..<2).map { _ in
                    try connection.send(request)
                    return try connection.readResponse().text
                }
            }
            #expect(statuses == ["fields \(limits.maxHeaderCount)", "fields \(limits.maxHeaderCount)"])
        }
    }

    /// What stays libmicrohttpd's own answer: a request head larger than its memory pool is
    /// refused before the server sees it, with MHD's status and HTML body (documented in
    /// docs/security-model.md).
    @Test func requestHeadBeyondTheMemoryPoolIsRefusedByLibmicrohttpdItself() async throws {
        try await withServer(routes: Self.routes) { server in
            let huge = String(repeating: "a", count: 2 * Self.defaults.connectionMemoryLimitBytes)
            let target = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /head?q=\(huge) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(target.status == 414)
            #expect(target.text.hasPrefix("<html>"))
            let header = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /head HTTP/1.1\r\nHost: t\r\nX-Big: \(huge)\r\n\r\n")
            #expect(header.status == 431)
            #expect(header.text.hasPrefix("<html>"))
            // MHD keeps a pool record per cookie pair, which no server limit counts: 2 000 pairs
            // (under 10 KiB) are refused by MHD itself. (0.9.75 sends that answer's head twice,
            // so only the status is checked.)
            let cookies = (0..<2_000).map { _ in "a=1" }.joined(separator: "; ")
            let cookie = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /head HTTP/1.1\r\nHost: t\r\nCookie: \(cookies)\r\n\r\n")
            #expect(cookie.status == 431)
            #expect(cookie.text != "error 431")
        }
    }

    @Test func limitsThatDoNotFitTheMemoryPoolAreRejectedBeforeBinding() {
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.maxHeaderBytes = configuration.connectionMemoryLimitBytes
        let server = HTTPServer(configuration: configuration, router: Router(), errorResponder: plainErrorResponder)
        let error = #expect(throws: HTTPServerError.self) { try server.start() }
        #expect(error?.code == .invalidConfiguration)
        #expect(error?.message.contains("connectionMemoryLimitBytes") == true)
    }
}

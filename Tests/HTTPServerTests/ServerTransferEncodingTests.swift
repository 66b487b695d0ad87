import Testing
@testable import HTTPServer

/// A Transfer-Encoding that is not exactly `chunked` is refused at once: libmicrohttpd does not
/// decode `chunked\t` as chunked, and the request would be held waiting for a body end.
@Suite("HTTPServer Transfer-Encoding")
struct ServerTransferEncodingTests {
    private static func routes(_ router: inout Router) {
        router.add("POST", "/echo") { request in text(200, String(decoding: request.body, as: UTF8.self)) }
    }

    @Test(arguments: ["chunked\t", "chunked ", "chunked\t ", "chunked;"])
    func chunkedWithTrailingBytesIsRefusedNotHeld(encoding: String) async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await RawHTTPConnection.exchange(port: server.boundPort, """
                POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: \(encoding)\r\n\r\n5\r\nhello\r\n0\r\n\r\n
                """)
            #expect(response.status == 400)
            #expect(response.text == "error 400")
        }
    }

    @Test(arguments: ["chunked", "Chunked", "CHUNKED"])
    func exactlyChunkedInAnyCaseIsAssembled(encoding: String) async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await RawHTTPConnection.exchange(port: server.boundPort, """
                POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding:  \(encoding)\r\n\r\n5\r\nhello\r\n0\r\n\r\n
                """)
            #expect(response.status == 200)
            #expect(response.text == "hello")
        }
    }

    @Test func everyResponseCarriesNosniffUnlessTheHandlerSetsIt() async throws {
        try await withServer(routes: { router in
            router.add("GET", "/plain") { _ in text(200, "x") }
            router.add("GET", "/own") { _ in text(200, "x", headers: ["X-Content-Type-Options": "nosniff"]) }
        }) { server in
            let plain = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /plain HTTP/1.1\r\nHost: t\r\n\r\n")
            let missing = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /none HTTP/1.1\r\nHost: t\r\n\r\n")
            let own = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /own HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(plain.header("X-Content-Type-Options") == "nosniff")
            #expect(missing.status == 404)
            #expect(missing.header("X-Content-Type-Options") == "nosniff")
            #expect(own.headers.filter { $0.name == "X-Content-Type-Options" }.count == 1)
        }
    }
}

import Testing
@testable import HTTPServer

/// libmicrohttpd hands the request target and header values to the server as C strings: a raw
/// NUL would silently cut them short, so what a proxy in front checked (`/realms\0/../../x`
/// reads as `/x`) is not what a route gets (`/realms`). The server measures both itself and
/// refuses any NUL with 400 from its error responder.
@Suite("HTTPServer NUL bytes in the request head")
struct ServerNULByteTests {
    private static func routes(_ router: inout Router) {
        router.add("GET", "/realms") { _ in text(200, "realms list") }
        router.add("GET", "/echo") { request in text(200, "auth=\(request.headers["Authorization"] ?? "-")") }
    }

    private static func exchange(_ server: HTTPServer, _ head: [UInt8]) async throws -> RawResponse {
        try await RawHTTPConnection.run {
            let connection = try RawHTTPConnection(port: server.boundPort)
            try connection.send(head)
            return try connection.readResponse()
        }
    }

    private static func bytes(_ parts: String...) -> [UInt8] {
        Array(parts.joined(separator: "\0").utf8)
    }

    @Test func nulInThePathIsRefusedNotTruncated() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await Self.exchange(server, Self.bytes("GET /realms", "/../../x HTTP/1.1\r\nHost: t\r\n\r\n"))
            #expect(response.status == 400)
            #expect(response.text == "error 400")
        }
    }

    @Test func nulInTheQueryIsRefused() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await Self.exchange(server, Self.bytes("GET /realms?a=b", "c HTTP/1.1\r\nHost: t\r\n\r\n"))
            #expect(response.status == 400)
        }
    }

    @Test func nulInAPathThatLooksLikeTheVersionIsRefused() async throws {
        // The bytes after the NUL mimic what libmicrohttpd leaves after a clean target.
        try await withServer(routes: Self.routes) { server in
            let response = try await Self.exchange(server, Self.bytes("GET /realms", "HTTP/1.1", "/../x HTTP/1.1\r\nHost: t\r\n\r\n"))
            #expect(response.status == 400)
        }
    }

    @Test func nulInAHeaderValueIsRefusedNotTruncated() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await Self.exchange(server,
                                                   Self.bytes("GET /echo HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer abc", "junk\r\n\r\n"))
            #expect(response.status == 400)
            #expect(response.text == "error 400")
        }
    }

    @Test func nulInAHeaderNameIsRefused() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await Self.exchange(server, Self.bytes("GET /echo HTTP/1.1\r\nHost: t\r\nX-A", "b: v\r\n\r\n"))
            #expect(response.status == 400)
        }
    }

    @Test func cleanRequestsAreStillServedOnTheSameConnection() async throws {
        // The refusal is per request: a NUL-free request right after is answered normally.
        try await withServer(routes: Self.routes) { server in
            let (clean, refused, after) = try await RawHTTPConnection.run { () -> (RawResponse, RawResponse, RawResponse) in
                let connection = try RawHTTPConnection(port: server.boundPort)
                try connection.send("GET /echo HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer abc\r\n\r\n")
                let clean = try connection.readResponse()
                try connection.send(Self.bytes("GET /realms", "x HTTP/1.1\r\nHost: t\r\n\r\n"))
                let refused = try connection.readResponse()
                let second = try RawHTTPConnection(port: server.boundPort)
                try second.send("GET /realms HTTP/1.1\r\nHost: t\r\n\r\n")
                return (clean, refused, try second.readResponse())
            }
            #expect(clean.status == 200)
            #expect(clean.text == "auth=Bearer abc")
            #expect(refused.status == 400)
            #expect(after.status == 200)
            #expect(after.text == "realms list")
        }
    }

    @Test(arguments: [
        "GET /echo HTTP/1.1\nHost: t\nAuthorization:\tBearer abc\t\n\n",
        "GET  /echo HTTP/1.1\r\nHost: t\r\nEmpty:\r\nCookie: a=1; b=2\r\nAuthorization:   Bearer abc\r\n\r\n",
        "GET /echo?x=1&y HTTP/1.0\r\nAuthorization: Bearer abc\r\n\r\n",
    ])
    func headsWithoutNULInEveryShapeLibmicrohttpdAcceptsAreServed(head: String) async throws {
        // What the scan passes over between parts: spaces, tabs, bare LF line ends, empty values.
        try await withServer(routes: Self.routes) { server in
            let response = try await Self.exchange(server, Array(head.utf8))
            #expect(response.status == 200)
            #expect(response.text.hasPrefix("auth=Bearer abc"))
        }
    }

    @Test func obsoleteLineFoldingIsRefused() async throws {
        // RFC 9112 §5.2 lets a server refuse obs-fold; MHD would join the lines out of place.
        try await withServer(routes: Self.routes) { server in
            let response = try await Self.exchange(server, Array("GET /echo HTTP/1.1\r\nHost: t\r\nX: a\r\n b\r\n\r\n".utf8))
            #expect(response.status == 400)
        }
    }
}

import Foundation
import Testing
@testable import HTTPServer

@Suite("HTTPServer routing over real sockets")
struct ServerRoutingTests {
    private static func routes(_ router: inout Router) {
        router.add("GET", "/hello/:name") { request in
            text(200, "hello \(request.pathParameters["name"] ?? "?") via \(request.routeTemplate ?? "?")")
        }
        router.add("GET", "/items") { _ in text(200, "list") }
        router.add("POST", "/items") { _ in text(201, "created") }
        router.add("GET", "/query") { request in
            let items = request.queryItems().map { "\($0.name)=\($0.value)" }.joined(separator: "|")
            return text(200, "\(request.rawQuery ?? "<nil>") -> \(items) first=\(request.query("q") ?? "<nil>")")
        }
        router.add("GET", "/headers") { request in
            text(200, request.headers["x-custom-header"] ?? "<missing>",
                 headers: ["X-Reply": "ok", "Content-Type": "text/plain"])
        }
        router.add("GET", "/peer") { request in text(200, request.peerAddress) }
        router.add("GET", "/path") { request in text(200, request.path) }
    }

    @Test func pathParameterIsPassedToTheHandler() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await server.fetch("/hello/world%20wide")
            #expect(response.status == 200)
            #expect(response.text == "hello world wide via /hello/:name")
        }
    }

    @Test func unknownPathIs404FromTheErrorResponder() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await server.fetch("/nowhere")
            #expect(response.status == 404)
            #expect(response.text == "error 404")
            #expect(response.header("x-request-id") != nil)
        }
    }

    @Test func wrongMethodIs405WithAllowHeader() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await server.fetch("DELETE", "/items")
            #expect(response.status == 405)
            #expect(response.text == "error 405")
            #expect(response.header("allow") == "GET, HEAD, POST")
            let created = try await server.fetch("POST", "/items", body: [])
            #expect(created.status == 201)
        }
    }

    /// RFC 9110 §9.3.2: HEAD is GET without the body. libmicrohttpd leaves the body out and
    /// keeps the GET body's Content-Length (§8.6); the GET that follows on the same connection
    /// is read cleanly only if no body bytes were sent after the HEAD answer.
    @Test func headIsAnsweredByTheGetRouteWithoutABody() async throws {
        try await withServer(routes: Self.routes) { server in
            let port = server.boundPort
            let (head, get) = try await RawHTTPConnection.run { () -> (RawResponse, RawResponse) in
                let connection = try RawHTTPConnection(port: port)
                try connection.send("HEAD /hello/world HTTP/1.1\r\nHost: t\r\n\r\n")
                let head = try connection.readResponse(hasBody: false)
                try connection.send("GET /hello/world HTTP/1.1\r\nHost: t\r\n\r\n")
                return (head, try connection.readResponse())
            }
            #expect(head.status == 200)
            #expect(get.status == 200)
            #expect(get.text == "hello world via /hello/:name")
            #expect(head.header("Content-Length") == String(get.body.count))
            #expect(head.header("x-request-id") != nil)
        }
    }

    @Test func headOnAPostOnlyRouteIs405AndHeadIsNotAllowedThere() async throws {
        try await withServer(routes: { router in
            router.add("POST", "/submit") { _ in text(201, "created") }
        }) { server in
            let port = server.boundPort
            let response = try await RawHTTPConnection.run { () -> RawResponse in
                let connection = try RawHTTPConnection(port: port)
                try connection.send("HEAD /submit HTTP/1.1\r\nHost: t\r\n\r\n")
                return try connection.readResponse(hasBody: false)
            }
            #expect(response.status == 405)
            #expect(response.header("Allow") == "POST")
        }
    }

    @Test func queryIsKeptRawAndFormDecoded() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await server.fetch("/query?q=a+b%26c&q=second&e=%C3%A9&flag")
            #expect(response.status == 200)
            #expect(response.text == "q=a+b%26c&q=second&e=%C3%A9&flag -> q=a b&c|q=second|e=é|flag= first=a b&c")
        }
    }

    @Test func requestWithoutQueryHasNilRawQuery() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await server.fetch("/query")
            #expect(response.text == "<nil> ->  first=<nil>")
        }
    }

    @Test func headersAreCaseInsensitiveBothWays() async throws {
        try await withServer(routes: Self.routes) { server in
            let raw = try await RawHTTPConnection.exchange(
                port: server.boundPort, "GET /headers HTTP/1.1\r\nHost: t\r\nx-CUSTOM-hEaDeR: Value1\r\n\r\n")
            #expect(raw.status == 200)
            #expect(raw.text == "Value1")
            let fetched = try await server.fetch("/headers", headers: ["X-Custom-Header": "Value2"])
            #expect(fetched.text == "Value2")
            #expect(fetched.header("x-reply") == "ok")
        }
    }

    @Test func peerAddressIsTheLoopbackClient() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await server.fetch("/peer")
            #expect(response.text == "127.0.0.1")
        }
    }

    @Test func pathIsHandedOverStillEncoded() async throws {
        try await withServer(routes: Self.routes) { server in
            let raw = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /hello/a%2Fb HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(raw.text == "hello a/b via /hello/:name")
            let split = try await RawHTTPConnection.exchange(port: server.boundPort, "GET /hello/a/b HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(split.status == 404)
        }
    }

    @Test(arguments: ["/hello/..", "/hello/%2e%2E", "/hello/./x", "/hello/%zz", "/hello/a%00", "*", "http://t/hello/x"])
    func unreadablePathIs400(target: String) async throws {
        try await withServer(routes: Self.routes) { server in
            let raw = try await RawHTTPConnection.exchange(port: server.boundPort, "GET \(target) HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(raw.status == 400)
            #expect(raw.text == "error 400")
            #expect(raw.header("X-Request-Id") != nil)
        }
    }
}

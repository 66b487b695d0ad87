import Foundation
import Testing
@testable import HTTPServer

@Suite("HTTPServer request ids and access log")
struct ServerObservabilityTests {
    private static func routes(_ router: inout Router) {
        router.add("GET", "/id") { request in text(200, request.requestID) }
        router.add("GET", "/spoof") { _ in text(200, "", headers: ["X-Request-Id": "handler-chosen"]) }
        router.add("GET", "/users/:id") { _ in text(200, "user") }
    }

    @Test func validIncomingRequestIDIsEchoed() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await server.fetch("/id", headers: ["X-Request-Id": "abc-123.DEF_4"])
            #expect(response.header("X-Request-Id") == "abc-123.DEF_4")
            #expect(response.text == "abc-123.DEF_4")
        }
    }

    @Test func invalidIncomingRequestIDIsReplaced() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await RawHTTPConnection.exchange(
                port: server.boundPort, "GET /id HTTP/1.1\r\nHost: t\r\nX-Request-Id: bad id;<script>\r\n\r\n")
            let id = try #require(response.header("X-Request-Id"))
            #expect(id != "bad id;<script>")
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
            #expect(response.text == id)
        }
    }

    @Test func missingRequestIDIsGeneratedAndUniquePerRequest() async throws {
        try await withServer(routes: Self.routes) { server in
            let first = try await server.fetch("/id"), second = try await server.fetch("/id")
            let id = try #require(first.header("x-request-id"))
            #expect(id.count == 32 && id.allSatisfy(\.isHexDigit))
            #expect(first.text == id)
            #expect(second.header("x-request-id") != id)
        }
    }

    @Test func serverOwnsTheRequestIDHeader() async throws {
        try await withServer(routes: Self.routes) { server in
            let response = try await RawHTTPConnection.exchange(
                port: server.boundPort, "GET /spoof HTTP/1.1\r\nHost: t\r\nX-Request-Id: from-client\r\n\r\n")
            #expect(response.headers.filter { $0.name.lowercased() == "x-request-id" }.map(\.value) == ["from-client"])
        }
    }

    @Test func accessLogHasOneEntryPerRequestWithoutQuery() async throws {
        let recorder = AccessLogRecorder()
        try await withServer(accessLog: recorder.sink, routes: Self.routes) { server in
            let ok = try await server.fetch("/users/u1?code=SECRETCODE", headers: ["X-Request-Id": "req-1"])
            let missing = try await server.fetch("/nope?token=SECRETTOKEN")
            let wrongMethod = try await server.fetch("DELETE", "/users/u2")
            #expect([ok.status, missing.status, wrongMethod.status] as [Int] == [200, 404, 405])

            let entries = recorder.entries
            #expect(entries.map(\.method) == ["GET", "GET", "DELETE"])
            #expect(entries.map(\.route) == ["/users/:id", "unmatched", "unmatched"])
            #expect(entries.map(\.status) == [200, 404, 405])
            #expect(entries.map(\.requestID) == ["req-1", missing.header("x-request-id"), wrongMethod.header("x-request-id")])
            #expect(entries.allSatisfy { $0.durationSeconds >= 0 && $0.durationSeconds < 60 })
            let logged = entries.map { String(describing: $0) }.joined()
            #expect(!logged.contains("SECRET"))
            #expect(!logged.contains("u1"))
        }
    }
}

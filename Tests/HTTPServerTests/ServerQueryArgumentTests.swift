import Testing
@testable import HTTPServer

/// A query of many short arguments inside the target limit is answered at once: libmicrohttpd
/// is left an empty query to parse (`herald_MHD_skip_query_arguments`), since parsing each
/// argument into its memory pool left about 1 000 of them without any answer, while the server
/// still reads every argument from the raw target itself.
@Suite("HTTPServer query arguments")
struct ServerQueryArgumentTests {
    private static func routes(_ router: inout Router) {
        router.add("GET", "/count") { request in
            let items = request.queryItems()
            return text(200, "items \(items.count) last \(items.last.map { "\($0.name)=\($0.value)" } ?? "-")")
        }
    }

    private static let targetLimit = HTTPServerConfiguration().maxRequestTargetBytes

    /// One GET of `target` on a fresh connection; the client's 15 s receive timeout turns a
    /// request left unanswered into a thrown error.
    private static func get(_ server: HTTPServer, _ target: String) async throws -> RawResponse {
        try await RawHTTPConnection.exchange(port: server.boundPort, "GET \(target) HTTP/1.1\r\nHost: t\r\n\r\n")
    }

    @Test func thousandArgumentsAreAnsweredWithEveryItemSeen() async throws {
        try await withServer(routes: Self.routes) { server in
            let target = "/count?" + (0..<1_000).map { "a\($0)=1" }.joined(separator: "&")
            #expect(target.utf8.count < Self.targetLimit)
            let response = try await Self.get(server, target)
            #expect(response.status == 200)
            #expect(response.text == "items 1000 last a999=1")
        }
    }

    @Test func fourThousandArgumentsAtTheTargetLimitAreAnswered() async throws {
        try await withServer(routes: Self.routes) { server in
            let target = "/count?" + Array(repeating: "a", count: 3_999).joined(separator: "&") + "&z"
            #expect(target.utf8.count <= Self.targetLimit && target.utf8.count > Self.targetLimit - 200)
            let response = try await Self.get(server, target)
            #expect(response.status == 200)
            #expect(response.text == "items 4000 last z=")
        }
    }

    @Test func manyArgumentsTwiceOnOneConnection() async throws {
        try await withServer(routes: Self.routes) { server in
            let request = "GET /count?" + Array(repeating: "k=v", count: 1_500).joined(separator: "&") + " HTTP/1.1\r\nHost: t\r\n\r\n"
            let port = server.boundPort
            let answers = try await RawHTTPConnection.run { () -> [String] in
                let connection = try RawHTTPConnection(port: port)
                return try (0..<2).map { _ in
                    try connection.send(request)
                    return try connection.readResponse().text
                }
            }
            #expect(answers == ["items 1500 last k=v", "items 1500 last k=v"])
        }
    }

    @Test func shortQueriesAreReadAsBefore() async throws {
        try await withServer(routes: Self.routes) { server throws in
            #expect(try await Self.get(server, "/count?").text == "items 0 last -")
            #expect(try await Self.get(server, "/count?x").text == "items 1 last x=")
            #expect(try await Self.get(server, "/count?x=1&y=%20+2").text == "items 2 last y=  2")
            #expect(try await Self.get(server, "/count").text == "items 0 last -")
        }
    }
}

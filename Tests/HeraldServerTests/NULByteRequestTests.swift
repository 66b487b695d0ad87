import Foundation
import Testing
@testable import HeraldServer

/// The two examples against the real server: a NUL in the target or in a header value
/// is a 400 in the error envelope, never a truncated path or credential.
@Suite struct NULByteRequestTests {
    private static func raw(_ herald: RunningHerald, _ parts: String...) async throws -> TestHTTPClient.Response {
        let client = herald.client
        let bytes = Array(parts.joined(separator: "\0").utf8)
        return try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try client.sendRaw(bytes) }) }.start()
        }
    }

    private static func expectEnvelope400(_ response: TestHTTPClient.Response, requestID: String) {
        #expect(response.status == 400)
        #expect(response.json["code"]?.stringValue == "bad_request")
        #expect(response.json["status"]?.doubleValue == 400)
        #expect(response.json["requestId"]?.stringValue == requestID)
        #expect(response.json["items"] == nil)
    }

    @Test func nulInTheAdminPathIsNotServedAsTheRealmsList() async throws {
        try await RunningHerald.with { herald in
            let token = RunningHerald.adminToken
            let listed = try await herald.send("GET", "/api/admin/realms", headers: [("Authorization", "Bearer \(token)")])
            #expect(listed.status == 200)
            let response = try await Self.raw(herald, "GET /api/admin/realms", """
                /../../x HTTP/1.1\r\nHost: t\r\nX-Request-Id: nul-1\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n
                """)
            Self.expectEnvelope400(response, requestID: "nul-1")
        }
    }

    @Test func bearerTokenFollowedByNULAndJunkDoesNotAuthenticate() async throws {
        try await RunningHerald.with { herald in
            let response = try await Self.raw(herald, """
                GET /api/admin/realms HTTP/1.1\r\nHost: t\r\nX-Request-Id: nul-2\r\nAuthorization: Bearer \(RunningHerald.adminToken)
                """, "junk\r\nConnection: close\r\n\r\n")
            Self.expectEnvelope400(response, requestID: "nul-2")
        }
    }
}

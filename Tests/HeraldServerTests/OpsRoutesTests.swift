import Foundation
import Testing
@testable import HeraldServer

@Suite struct OpsRoutesTests {
    @Test func healthzAndReadyzAnswer() async throws {
        try await RunningHerald.with { herald in
            let health = try await herald.send("GET", "/healthz")
            #expect(health.status == 200)
            #expect(health.json["status"]?.stringValue == "ok")
            let ready = try await herald.send("GET", "/readyz")
            #expect(ready.status == 200)
            #expect(ready.json["status"]?.stringValue == "ready")
        }
    }

    @Test func everyResponseCarriesARequestID() async throws {
        try await RunningHerald.with { herald in
            let echoed = try await herald.send("GET", "/healthz", headers: [("X-Request-Id", "abc-123")])
            #expect(echoed.header("X-Request-Id") == "abc-123")
            let generated = try await herald.send("GET", "/nope", headers: [("X-Request-Id", "bad id with spaces")])
            let id = try #require(generated.header("X-Request-Id"))
            #expect(id != "bad id with spaces" && !id.isEmpty)
        }
    }

    @Test func unknownRouteAnswersTheErrorEnvelope() async throws {
        try await RunningHerald.with { herald in
            let response = try await herald.send("GET", "/no/such/route", headers: [("X-Request-Id", "r-1")])
            #expect(response.status == 404)
            #expect(response.json["code"]?.stringValue == "not_found")
            #expect(response.json["status"]?.doubleValue == 404)
            #expect(response.json["requestId"]?.stringValue == "r-1")
            let wrongMethod = try await herald.send("DELETE", "/healthz")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.json["code"]?.stringValue == "method_not_allowed")
        }
    }

    /// RFC 9110 §9.3.2: every GET route answers HEAD with GET's status and headers and no body;
    /// Content-Length is the GET body's (§8.6). The test client reads a HEAD answer to the
    /// connection's close, so body bytes the server sent anyway would show in `body`.
    @Test func headOnGetRoutesAnswersLikeGetWithoutABody() async throws {
        try await RunningHerald.with { herald in
            try await herald.createRealm("acme")
            let paths = ["/healthz", "/readyz", "/console/", "/api-docs/openapi.yaml", "/api/oauth/acme/jwks.json",
                         "/api/oauth/acme/.well-known/openid-configuration"]
            for path in paths {
                let get = try await herald.send("GET", path)
                let head = try await herald.send("HEAD", path)
                #expect(get.status == 200, "GET \(path)")
                #expect(head.status == 200, "HEAD \(path)")
                #expect(head.body.isEmpty, "HEAD \(path) sent \(head.body.count) body bytes")
                #expect(!get.body.isEmpty && head.header("Content-Length") == String(get.body.count), "HEAD \(path)")
                #expect(head.header("Content-Type") == get.header("Content-Type"), "HEAD \(path)")
            }
        }
    }

    @Test func headOnAPostOnlyRouteIs405AllowingPostOnly() async throws {
        try await RunningHerald.with { herald in
            try await herald.createRealm("acme")
            let head = try await herald.send("HEAD", "/api/oauth/acme/token")
            #expect(head.status == 405)
            #expect(head.header("Allow") == "POST")
            #expect(head.body.isEmpty)
            let delete = try await herald.send("DELETE", "/healthz")
            #expect(delete.status == 405)
            #expect(delete.header("Allow") == "GET, HEAD")
        }
    }

    @Test func oversizeBodyIs413WithEnvelope() async throws {
        try await RunningHerald.with { herald in
            let response = try await herald.send("POST", "/healthz", body: [UInt8](repeating: 65, count: 70_000))
            #expect(response.status == 413)
            #expect(response.json["code"]?.stringValue == "payload_too_large")
        }
    }

    /// Oversized request heads are refused by Herald's HTTP layer (not by libmicrohttpd, whose
    /// memory pool is sized to read somewhat more), so they carry the envelope too.
    @Test func oversizeTargetAndHeadersAreRefusedWithEnvelope() async throws {
        try await RunningHerald.with { herald in
            let requestID = [("X-Request-Id", "limits-1")]
            let longTarget = try await herald.send("GET", "/healthz?q=" + String(repeating: "a", count: 9_000), headers: requestID)
            let bigHeader = try await herald.send("GET", "/healthz",
                                                  headers: requestID + [("X-Big", String(repeating: "b", count: 40_000))])
            let manyHeaders = try await herald.send("GET", "/healthz",
                                                    headers: requestID + (0..<150).map { ("X-H\($0)", "v") })
            for (response, status, code) in [(longTarget, 414, "uri_too_long"), (bigHeader, 431, "request_header_fields_too_large"),
                                             (manyHeaders, 431, "request_header_fields_too_large")] {
                #expect(response.status == status)
                #expect(response.header("Content-Type") == "application/json")
                #expect(response.json["status"]?.doubleValue == Double(status))
                #expect(response.json["code"]?.stringValue == code)
                #expect(response.json["message"]?.stringValue?.isEmpty == false)
                #expect(response.json["requestId"]?.stringValue == "limits-1")
                #expect(response.header("X-Request-Id") == "limits-1")
            }
        }
    }

    @Test func accessLogNamesRouteTemplateOnly() async throws {
        try await RunningHerald.with { herald in
            _ = try await herald.send("GET", "/healthz?secret=do-not-log")
            let lines = herald.logs.captured.filter { $0.contains("\"event\":\"request\"") }
            #expect(lines.contains { $0.contains("\"route\":\"/healthz\"") && $0.contains("\"status\":200") })
            #expect(!herald.logs.captured.joined().contains("do-not-log"))
        }
    }

    @Test func masterKeyFileIsCreatedOwnerOnly() async throws {
        try await RunningHerald.with { herald in
            let path = herald.folder.path + "/herald.key"
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let permissions = try #require(attributes[.posixPermissions] as? NSNumber)
            #expect(permissions.intValue & 0o777 == 0o600)
        }
    }
}

@Suite struct MetricsTests {
    @Test func metricsCountRequestsByRouteAndStatus() async throws {
        try await RunningHerald.with { herald in
            _ = try await herald.send("GET", "/healthz")
            _ = try await herald.send("GET", "/healthz")
            _ = try await herald.send("GET", "/missing")
            let response = try await herald.send("GET", "/metrics")
            #expect(response.status == 200)
            #expect(response.text.contains(#"herald_http_requests_total{route="/healthz",status="200"} 2"#))
            #expect(response.text.contains(#"herald_http_requests_total{route="unmatched",status="404"} 1"#))
            #expect(response.text.contains(#"herald_http_request_duration_seconds_count{route="/healthz"} 2"#))
        }
    }

    @Test func sqliteWritesPerCommitAreAHistogram() async throws {
        try await RunningHerald.with { herald in
            let text = try await herald.send("GET", "/metrics").text
            #expect(text.contains("# TYPE herald_sqlite_commit_batch_size histogram"))
            let count = text.firstMatch(of: /herald_sqlite_commit_batch_size_count (\d+)/).map { Int($0.1) ?? 0 } ?? 0
            let sum = text.firstMatch(of: /herald_sqlite_commit_batch_size_sum (\d+)/).map { Int($0.1) ?? 0 } ?? 0
            #expect(count >= 1 && sum >= count, "the migrations committed")
            #expect(text.contains("herald_sqlite_commit_batch_size_bucket{le=\"+Inf\"} \(count)"))
        }
    }

    @Test func histogramBucketsAreCumulative() {
        let metrics = HeraldMetrics()
        metrics.recordRequest(route: "/x", status: 200, durationSeconds: 0.002)
        metrics.recordRequest(route: "/x", status: 200, durationSeconds: 0.2)
        let text = metrics.render()
        #expect(text.contains(#"herald_http_request_duration_seconds_bucket{route="/x",le="0.0025"} 1"#))
        #expect(text.contains(#"herald_http_request_duration_seconds_bucket{route="/x",le="0.25"} 2"#))
        #expect(text.contains(#"herald_http_request_duration_seconds_bucket{route="/x",le="+Inf"} 2"#))
    }
}

import Foundation
@testable import HTTPServer
@testable import HeraldServer
import Login
import Testing

/// The one log line and metric per login attempt, for every door.
@Suite("Login recorder")
struct LoginRecorderTests {
    static func logger(_ logs: LogCapture) -> Logger {
        Logger(level: .info, now: { Date(timeIntervalSince1970: 1_750_000_000) }, sink: logs.sink)
    }

    static func recorder(_ door: LoginRecorder.Door, logs: LogCapture, metrics: HeraldMetrics) -> LoginRecorder {
        LoginRecorder(door: door, provider: "apple", metrics: metrics, counts: nil, logger: logger(logs))
    }

    /// Records `outcome` on a request as the server routes it, then writes that request's
    /// access-log line as the server does once it answers `status`.
    static func attempt(_ outcome: Result<LoginResult, LoginError>, by recorder: LoginRecorder, realmID: String = "acme",
                        clientID: String = "", requestID: String = "r", status: Int = 401) {
        var request = HTTPRequest(method: "POST", path: "/api/oauth/acme/apple/native-login", requestID: requestID)
        request.accessLogNote = AccessLogNote()
        recorder.record(outcome, realmID: realmID, clientID: clientID, request: request)
        AccessLog(logger: recorder.logger, metrics: recorder.metrics)
            .write(AccessLogEntry(method: "POST", route: "/api/oauth/:realm/apple/native-login", status: status,
                                  durationSeconds: 0.0123456, requestID: requestID, note: request.accessLogNote?.current))
    }

    static func fields(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("outages are errors, the caller's refusals rejections; the client is named only once the pipeline found it")
    func classification() throws {
        let logs = LogCapture(), metrics = HeraldMetrics()
        let native = Self.recorder(.native, logs: logs, metrics: metrics)
        Self.attempt(.failure(LoginError(.providerUnavailable, providerReason: "apple_unavailable", retryAfterSeconds: 5)),
                     by: native, clientID: "ios-app", requestID: "r1", status: 503)
        Self.attempt(.failure(LoginError(.unknownClient)), by: native, clientID: "typed-by-anyone", requestID: "r2")
        Self.attempt(.failure(LoginError(.invalidIdentityToken, providerReason: "audience", accountID: nil)), by: native,
                     realmID: "Not a slug", clientID: "ios-app", requestID: "r3")
        let lines = try logs.captured.map(Self.fields)
        try #require(lines.count == 3)
        #expect(lines.map { $0["outcome"] as? String } == ["error", "rejected", "rejected"])
        #expect(lines.map { $0["client"] as? String } == ["ios-app", "unknown", "ios-app"])
        #expect(lines.map { $0["reason"] as? String } == ["apple_unavailable", "unknown_client", "audience"])
        #expect(lines.map { $0["realm"] as? String } == ["acme", "acme", "invalid"])
        #expect(lines.allSatisfy { $0["event"] as? String == "login" && $0["door"] as? String == "native" })
        // The request's own fields, in the same line: one line per attempt.
        #expect(lines.map { $0["requestId"] as? String } == ["r1", "r2", "r3"])
        #expect(lines.map { $0["status"] as? Int } == [503, 401, 401])
        #expect(lines.allSatisfy { $0["route"] as? String == "/api/oauth/:realm/apple/native-login" })
        #expect(lines.allSatisfy { $0["method"] as? String == "POST" && $0["durationMs"] as? Double == 12.35 })
        let text = metrics.render()
        #expect(text.contains(#"herald_logins_total{provider="apple",door="native",outcome="error",reason="apple_unavailable"} 1"#))
        #expect(text.contains(#"herald_logins_total{provider="apple",door="native",outcome="rejected",reason="unknown_client"} 1"#))
    }

    @Test("each door is its own log field and metric series")
    func doorsAreCountedApart() throws {
        let logs = LogCapture(), metrics = HeraldMetrics()
        let refusal = LoginError(.registrationDisabled)
        for door in [LoginRecorder.Door.native, .web, .web] {
            Self.attempt(.failure(refusal), by: Self.recorder(door, logs: logs, metrics: metrics))
        }
        #expect(try logs.captured.map { try Self.fields($0)["door"] as? String } == ["native", "web", "web"])
        let text = metrics.render()
        #expect(text.contains(#"herald_logins_total{provider="apple",door="native",outcome="rejected",reason="registration_disabled"} 1"#))
        #expect(text.contains(#"herald_logins_total{provider="apple",door="web",outcome="rejected",reason="registration_disabled"} 2"#))
    }

    @Test("a request that left no attempt is a request line; a request built outside the server drops what is left on it")
    func otherRequestsKeepTheirLine() throws {
        let logs = LogCapture(), metrics = HeraldMetrics()
        AccessLog(logger: Self.logger(logs), metrics: metrics)
            .write(AccessLogEntry(method: "GET", route: "/healthz", status: 200, durationSeconds: 0.0001, requestID: "h"))
        let line = try Self.fields(try #require(logs.captured.first))
        #expect(line["event"] as? String == "request" && line["route"] as? String == "/healthz" && line["status"] as? Int == 200)
        #expect(line["outcome"] == nil)

        let outside = HTTPRequest(method: "POST", path: "/x")
        Self.recorder(.native, logs: logs, metrics: metrics)
            .record(.failure(LoginError(.unknownClient)), realmID: "acme", clientID: "", request: outside)
        #expect(outside.accessLogNote == nil)
        #expect(logs.captured.count == 1)
    }
}

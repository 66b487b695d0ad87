import Foundation
@testable import HeraldServer
import Login
import Testing

/// The one log line and metric per login attempt, for every door.
@Suite("Login recorder")
struct LoginRecorderTests {
    static func recorder(_ door: LoginRecorder.Door, logs: LogCapture, metrics: HeraldMetrics) -> LoginRecorder {
        LoginRecorder(door: door, provider: "apple", metrics: metrics, counts: nil,
                      logger: Logger(level: .info, now: { Date(timeIntervalSince1970: 1_750_000_000) }, sink: logs.sink))
    }

    static func fields(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test("outages are errors, the caller's refusals rejections; the client is named only once the pipeline found it")
    func classification() throws {
        let logs = LogCapture(), metrics = HeraldMetrics()
        let native = Self.recorder(.native, logs: logs, metrics: metrics)
        let started = DispatchTime.now().uptimeNanoseconds
        native.record(.failure(LoginError(.providerUnavailable, providerReason: "apple_unavailable", retryAfterSeconds: 5)),
                      realmID: "acme", clientID: "ios-app", requestID: "r1", started: started)
        native.record(.failure(LoginError(.unknownClient)), realmID: "acme", clientID: "typed-by-anyone", requestID: "r2",
                      started: started)
        native.record(.failure(LoginError(.invalidIdentityToken, providerReason: "audience", accountID: nil)),
                      realmID: "Not a slug", clientID: "ios-app", requestID: "r3", started: started)
        let lines = try logs.captured.map(Self.fields)
        try #require(lines.count == 3)
        #expect(lines.map { $0["outcome"] as? String } == ["error", "rejected", "rejected"])
        #expect(lines.map { $0["client"] as? String } == ["ios-app", "unknown", "ios-app"])
        #expect(lines.map { $0["reason"] as? String } == ["apple_unavailable", "unknown_client", "audience"])
        #expect(lines.map { $0["realm"] as? String } == ["acme", "acme", "invalid"])
        #expect(lines.allSatisfy { $0["event"] as? String == "login" && $0["door"] as? String == "native" })
        let text = metrics.render()
        #expect(text.contains(#"herald_logins_total{provider="apple",door="native",outcome="error",reason="apple_unavailable"} 1"#))
        #expect(text.contains(#"herald_logins_total{provider="apple",door="native",outcome="rejected",reason="unknown_client"} 1"#))
    }

    @Test("each door is its own log field and metric series")
    func doorsAreCountedApart() throws {
        let logs = LogCapture(), metrics = HeraldMetrics()
        let refusal = LoginError(.registrationDisabled)
        for door in [LoginRecorder.Door.native, .web, .web] {
            Self.recorder(door, logs: logs, metrics: metrics)
                .record(.failure(refusal), realmID: "acme", clientID: "", requestID: "r", started: DispatchTime.now().uptimeNanoseconds)
        }
        #expect(try logs.captured.map { try Self.fields($0)["door"] as? String } == ["native", "web", "web"])
        let text = metrics.render()
        #expect(text.contains(#"herald_logins_total{provider="apple",door="native",outcome="rejected",reason="registration_disabled"} 1"#))
        #expect(text.contains(#"herald_logins_total{provider="apple",door="web",outcome="rejected",reason="registration_disabled"} 2"#))
    }
}

import Foundation
import Synchronization

/// Process-wide counters and latency histograms, rendered in the Prometheus text format at
/// `GET /metrics`. One mutex guards plain dictionaries: the critical sections are a few
/// increments, far cheaper than the request they describe.
public final class HeraldMetrics: Sendable {
    /// Upper bounds (seconds) of the latency histogram buckets.
    static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private struct Histogram {
        var bucketCounts = [Int](repeating: 0, count: HeraldMetrics.latencyBuckets.count)
        var count = 0
        var sum = 0.0
    }

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latency: [String: Histogram] = [:]
        var logins: [LoginKey: Int] = [:]
        var appleNotifications: [NotificationKey: Int] = [:]
        var appleCalls: [AppleCallKey: Int] = [:]
    }

    /// Raw label values; escaping happens once, at render time, not per request.
    private struct RequestKey: Hashable { let route: String; let status: Int }
    private struct LoginKey: Hashable { let provider: String; let outcome: String; let reason: String }
    private struct NotificationKey: Hashable { let type: String; let outcome: String }
    private struct AppleCallKey: Hashable { let operation: String; let outcome: String }

    private let state = Mutex(State())
    /// Extra sources rendered after Herald's own (e.g. the Apple JWKS client's counters).
    private let collectors: [@Sendable () -> String]

    public init(collectors: [@Sendable () -> String] = []) {
        self.collectors = collectors
    }

    /// Counts one HTTP request by route template and status, and its latency by route.
    public func recordRequest(route: String, status: Int, durationSeconds: Double) {
        state.withLock { state in
            state.requests[RequestKey(route: route, status: status), default: 0] += 1
            var histogram = state.latency[route] ?? Histogram()
            if let bucket = HeraldMetrics.latencyBuckets.firstIndex(where: { durationSeconds <= $0 }) {
                histogram.bucketCounts[bucket] += 1
            }
            histogram.count += 1
            histogram.sum += durationSeconds
            state.latency[route] = histogram
        }
    }

    /// Counts one login attempt by provider, outcome (`success`, `rejected`, `error`) and reason.
    public func recordLogin(provider: String, outcome: String, reason: String) {
        state.withLock { state in
            state.logins[LoginKey(provider: provider, outcome: outcome, reason: reason), default: 0] += 1
        }
    }

    /// Counts one Apple server-to-server notification by event type (`unverified` when it was
    /// refused) and outcome (`applied`, `ignored`, `duplicate`, `rejected_<reason>`, `apple_unavailable`).
    public func recordAppleNotification(type: String, outcome: String) {
        state.withLock { state in
            state.appleNotifications[NotificationKey(type: type, outcome: outcome), default: 0] += 1
        }
    }

    /// Counts one call Herald made to Apple: `operation` `token_exchange` or `revoke`,
    /// `outcome` `success` or an `AppleAPIFailure` label.
    public func recordAppleCall(operation: String, outcome: String) {
        state.withLock { state in
            state.appleCalls[AppleCallKey(operation: operation, outcome: outcome), default: 0] += 1
        }
    }

    /// The Prometheus text exposition of every metric.
    public func render() -> String {
        var text = ""
        state.withLock { state in
            text += "# HELP herald_http_requests_total HTTP requests by route template and status.\n"
            text += "# TYPE herald_http_requests_total counter\n"
            let requests = state.requests.map { key, count in
                ("route=\"\(HeraldMetrics.escape(key.route))\",status=\"\(key.status)\"", count)
            }
            for (labels, count) in requests.sorted(by: { $0.0 < $1.0 }) {
                text += "herald_http_requests_total{\(labels)} \(count)\n"
            }
            text += "# HELP herald_http_request_duration_seconds Request latency by route template.\n"
            text += "# TYPE herald_http_request_duration_seconds histogram\n"
            for (route, histogram) in state.latency.sorted(by: { $0.key < $1.key }) {
                let label = "route=\"\(HeraldMetrics.escape(route))\""
                var cumulative = 0
                for (index, bound) in HeraldMetrics.latencyBuckets.enumerated() {
                    cumulative += histogram.bucketCounts[index]
                    text += "herald_http_request_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(cumulative)\n"
                }
                text += "herald_http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(histogram.count)\n"
                text += "herald_http_request_duration_seconds_sum{\(label)} \(histogram.sum)\n"
                text += "herald_http_request_duration_seconds_count{\(label)} \(histogram.count)\n"
            }
            text += "# HELP herald_logins_total Login attempts by provider, outcome and reason.\n"
            text += "# TYPE herald_logins_total counter\n"
            let logins = state.logins.map { key, count in
                ("provider=\"\(HeraldMetrics.escape(key.provider))\",outcome=\"\(HeraldMetrics.escape(key.outcome))\","
                    + "reason=\"\(HeraldMetrics.escape(key.reason))\"", count)
            }
            for (labels, count) in logins.sorted(by: { $0.0 < $1.0 }) {
                text += "herald_logins_total{\(labels)} \(count)\n"
            }
            text += "# HELP herald_apple_notifications_total Apple server-to-server notifications by type and outcome.\n"
            text += "# TYPE herald_apple_notifications_total counter\n"
            let notifications = state.appleNotifications.map { key, count in
                ("type=\"\(HeraldMetrics.escape(key.type))\",outcome=\"\(HeraldMetrics.escape(key.outcome))\"", count)
            }
            for (labels, count) in notifications.sorted(by: { $0.0 < $1.0 }) {
                text += "herald_apple_notifications_total{\(labels)} \(count)\n"
            }
            text += "# HELP herald_apple_calls_total Calls to Apple's token and revoke endpoints by operation and outcome.\n"
            text += "# TYPE herald_apple_calls_total counter\n"
            let calls = state.appleCalls.map { key, count in
                ("operation=\"\(HeraldMetrics.escape(key.operation))\",outcome=\"\(HeraldMetrics.escape(key.outcome))\"", count)
            }
            for (labels, count) in calls.sorted(by: { $0.0 < $1.0 }) {
                text += "herald_apple_calls_total{\(labels)} \(count)\n"
            }
        }
        for collector in collectors { text += collector() }
        return text
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}

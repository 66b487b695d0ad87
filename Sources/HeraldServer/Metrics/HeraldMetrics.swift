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
        var logins: [Labels: Int] = [:]
        var appleNotifications: [Labels: Int] = [:]
        var appleCalls: [Labels: Int] = [:]
    }

    /// Raw label values; escaping happens once, at render time, not per request.
    private struct RequestKey: Hashable { let route: String; let status: Int }
    /// A counter's label values, in the order of its label names.
    private struct Labels: Hashable { let values: [String] }

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

    /// Counts one login attempt by provider, door (`native`, `web`), outcome (`success`,
    /// `rejected`, `error`) and reason.
    public func recordLogin(provider: String, door: String, outcome: String, reason: String) {
        state.withLock { state in
            state.logins[Labels(values: [provider, door, outcome, reason]), default: 0] += 1
        }
    }

    /// Counts one Apple server-to-server notification by event type (`unverified` when it was
    /// refused) and outcome (`applied`, `ignored`, `duplicate`, `rejected_<reason>`, `apple_unavailable`).
    public func recordAppleNotification(type: String, outcome: String) {
        state.withLock { state in
            state.appleNotifications[Labels(values: [type, outcome]), default: 0] += 1
        }
    }

    /// Counts one call Herald made to Apple: `operation` `token_exchange` or `revoke`,
    /// `outcome` `success` or an `AppleAPIFailure` label.
    public func recordAppleCall(operation: String, outcome: String) {
        state.withLock { state in
            state.appleCalls[Labels(values: [operation, outcome]), default: 0] += 1
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
            text += Self.counter("herald_logins_total", help: "Login attempts by provider, door, outcome and reason.",
                                 labels: ["provider", "door", "outcome", "reason"], state.logins)
            text += Self.counter("herald_apple_notifications_total",
                                 help: "Apple server-to-server notifications by type and outcome.",
                                 labels: ["type", "outcome"], state.appleNotifications)
            text += Self.counter("herald_apple_calls_total",
                                 help: "Calls to Apple's token and revoke endpoints by operation and outcome.",
                                 labels: ["operation", "outcome"], state.appleCalls)
        }
        for collector in collectors { text += collector() }
        return text
    }

    /// One counter family in the text format, its series sorted by their label text.
    private static func counter(_ name: String, help: String, labels names: [String], _ series: [Labels: Int]) -> String {
        var text = "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        let rendered = series.map { labels, count in
            (zip(names, labels.values).map { "\($0)=\"\(escape($1))\"" }.joined(separator: ","), count)
        }
        for (labels, count) in rendered.sorted(by: { $0.0 < $1.0 }) { text += "\(name){\(labels)} \(count)\n" }
        return text
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}

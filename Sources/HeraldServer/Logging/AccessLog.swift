import HTTPServer

/// The one line per answered request, and its metric. A login attempt's line carries the
/// attempt's fields too (`LoginAttemptLine`, left by `LoginRecorder`) and is its `login` event;
/// every other request's is a `request` event. Neither has a path, query or body, which may
/// hold codes or tokens.
struct AccessLog: Sendable {
    let logger: Logger
    let metrics: HeraldMetrics

    func write(_ entry: AccessLogEntry) {
        metrics.recordRequest(route: entry.route, status: entry.status, durationSeconds: entry.durationSeconds)
        if let attempt = entry.note as? LoginAttemptLine {
            attempt.write(entry, to: logger)
            return
        }
        logger.info("request", ["method": .string(entry.method), "route": .string(entry.route), "status": .int(entry.status),
                                "durationMs": .double(Self.milliseconds(entry.durationSeconds)),
                                "requestId": .string(entry.requestID)])
    }

    /// Seconds as milliseconds with two decimals.
    static func milliseconds(_ seconds: Double) -> Double {
        (seconds * 100_000).rounded() / 100
    }
}

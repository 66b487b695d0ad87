import HTTPServer

/// A login attempt's fields, written with its request's access-log fields as one
/// `"event":"login"` line (`AccessLog`).
struct LoginAttemptLine: Sendable {
    /// The realm id, or "invalid" when what the caller typed is not a realm id at all.
    let realm: String
    let provider: String
    let door: String
    /// The client id once the pipeline found that client, else "unknown".
    let client: String
    let outcome: String
    let reason: String
    /// The account's id, or "" when the attempt reached none.
    let accountID: String

    func write(_ entry: AccessLogEntry, to logger: Logger) {
        logger.info("login", [
            "realm": .string(realm), "provider": .string(provider), "door": .string(door), "client": .string(client),
            "outcome": .string(outcome), "reason": .string(reason), "accountId": .string(accountID),
            "method": .string(entry.method), "route": .string(entry.route), "status": .int(entry.status),
            "durationMs": .double(AccessLog.milliseconds(entry.durationSeconds)), "requestId": .string(entry.requestID),
        ])
    }
}

import JOSE

/// An error a Herald JSON route answers with, rendered as the contract's error envelope:
/// `{"status","code","message","details","requestId"}`. Messages are for humans and never
/// carry tokens, codes, secrets, nonces or emails.
public struct APIError: Error, Sendable, Equatable {
    public let status: Int
    /// Stable machine-readable code (CONTRACT.md's list).
    public let code: String
    public let message: String
    public let details: [String: JSONValue]?
    /// Extra response headers, e.g. `Retry-After` on 429/503.
    public let headers: [(String, String)]

    public init(status: Int, code: String, message: String, details: [String: JSONValue]? = nil,
                headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers
    }

    public static func == (lhs: APIError, rhs: APIError) -> Bool {
        lhs.status == rhs.status && lhs.code == rhs.code && lhs.message == rhs.message && lhs.details == rhs.details
            && lhs.headers.map { "\($0.0):\($0.1)" } == rhs.headers.map { "\($0.0):\($0.1)" }
    }
}

extension APIError {
    /// 400 naming each invalid field in `details.fields` (field → what is wrong with it).
    public static func invalidFields(_ fields: [String: String]) -> APIError {
        let names = fields.keys.sorted().joined(separator: ", ")
        return APIError(status: 400, code: "bad_request", message: "Invalid request: \(names)",
                        details: ["fields": .object(fields.mapValues { .string($0) })])
    }

    public static func badRequest(_ message: String) -> APIError {
        APIError(status: 400, code: "bad_request", message: message)
    }

    public static let unauthorized = APIError(status: 401, code: "unauthorized", message: "Authentication required",
                                              headers: [("WWW-Authenticate", "Bearer")])
    public static func notFound(_ what: String = "Resource") -> APIError {
        APIError(status: 404, code: "not_found", message: "\(what) not found")
    }
    public static func conflict(_ message: String) -> APIError {
        APIError(status: 409, code: "conflict", message: message)
    }
    public static let payloadTooLarge = APIError(status: 413, code: "payload_too_large", message: "Request body too large")
    public static func rateLimited(retryAfter: Int) -> APIError {
        APIError(status: 429, code: "rate_limited", message: "Too many failed attempts, retry later",
                 headers: [("Retry-After", String(max(1, retryAfter)))])
    }
    /// A request over a request limit (`/token`, session refresh, `/authorize`), not a failure count.
    public static func tooManyRequests(retryAfter: Int) -> APIError {
        APIError(status: 429, code: "rate_limited", message: "Too many requests, retry later",
                 headers: [("Retry-After", String(max(1, retryAfter)))])
    }
    public static let internalError = APIError(status: 500, code: "internal_error", message: "Internal server error")
    public static func serviceUnavailable(code: String = "service_unavailable", retryAfter: Int) -> APIError {
        APIError(status: 503, code: code, message: "Upstream service unavailable",
                 headers: [("Retry-After", String(max(1, retryAfter)))])
    }

    /// The database is unreachable (or stayed busy past every retry); nothing was changed.
    public static let storageUnavailable = APIError(status: 503, code: "service_unavailable",
                                                    message: "The service is temporarily unavailable, retry later",
                                                    headers: [("Retry-After", String(storageRetryAfterSeconds))])
    /// Long enough for a database restart or failover to finish, short enough for an app to retry.
    static let storageRetryAfterSeconds = 2

    /// The generic error for a status the HTTP layer produced itself (400, 404, 405, 413, 414, 431, 503).
    static func forServerStatus(_ status: Int) -> APIError {
        switch status {
        case 404: return .notFound("Route")
        case 405: return APIError(status: 405, code: "method_not_allowed", message: "Method not allowed")
        case 413: return .payloadTooLarge
        case 414: return APIError(status: 414, code: "uri_too_long", message: "Request target too long")
        case 431: return APIError(status: 431, code: "request_header_fields_too_large", message: "Request headers too large")
        case 503: return .serviceUnavailable(retryAfter: 5)
        case 400..<500: return APIError(status: status, code: "bad_request", message: "Malformed request")
        default: return .internalError
        }
    }
}

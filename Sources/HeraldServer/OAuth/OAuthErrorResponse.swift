import Grants
import HTTPServer
import JOSE

/// RFC 6749 error answers of the OAuth protocol endpoints: `{"error","error_description"}`
/// as JSON, or the error carried back to the client's redirect URI (with `iss`, RFC 9207).
enum OAuthErrorResponse {
    /// A JSON error body; `invalid_client` answers 401 with a Basic challenge (RFC 6749 §5.2).
    static func json(_ error: GrantsError, realmID: String, status: Int? = nil,
                     extra: [String: JSONValue] = [:]) -> HTTPResponse {
        var object: [String: JSONValue] = ["error": .string(error.oauthError),
                                           "error_description": .string(error.message)]
        for (key, value) in extra { object[key] = value }
        let status = status ?? {
            switch error.code {
            case .invalidClient: 401
            case .serverError: 500
            case .temporarilyUnavailable: 503
            default: 400
            }
        }()
        var response = HTTPResponse.json(status: status, JSONValue.object(object), noStore: true)
        if error.code == .invalidClient {
            response.headers.set("WWW-Authenticate", "Basic realm=\"\(realmID)\"")
        }
        if error.code == .temporarilyUnavailable {
            response.headers.set("Retry-After", String(APIError.storageRetryAfterSeconds))
        }
        return response
    }

    /// 429 with `Retry-After` for a request over its limit. RFC 6749 defines no error for it;
    /// `temporarily_unavailable` (§4.1.2.1: "temporary overloading", the code Herald already
    /// answers at 503) is the registered one a client library treats as "retry later", and the
    /// status and `Retry-After` say how. Never a redirect: the redirect URI is not yet checked.
    static func rateLimited(retryAfter: Int) -> HTTPResponse {
        var response = HTTPResponse.json(status: 429, JSONValue.object([
            "error": "temporarily_unavailable", "error_description": "too many requests; retry later",
        ]), noStore: true)
        response.headers.set("Retry-After", String(max(1, retryAfter)))
        return response
    }

    /// 302 to the client's redirect URI with `error`, `error_description`, `state`, `iss`.
    static func redirect(_ error: GrantsError, redirectURI: String, state: String?, issuer: String) -> HTTPResponse {
        var parameters = [("error", error.oauthError), ("error_description", error.message)]
        if let state { parameters.append(("state", state)) }
        parameters.append(("iss", issuer))
        return found(RedirectURI.appending(parameters, to: redirectURI))
    }

    /// A 302 that no cache keeps.
    static func found(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: HTTPHeaders([("Location", location), ("Cache-Control", "no-store"),
                                                       ("Pragma", "no-cache")]))
    }
}

extension HTTPRequest {
    /// Whether the caller asked for JSON instead of a redirect (`Accept: application/json`).
    var acceptsJSON: Bool {
        headers.values("Accept").contains { $0.lowercased().contains("application/json") }
    }
}

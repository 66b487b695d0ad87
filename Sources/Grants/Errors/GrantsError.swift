/// An error raised by the Grants module. Each code maps to one RFC 6749 error string;
/// `message` is safe to show a client: it never holds a code, token, secret or nonce.
public struct GrantsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, stable for callers to switch on.
    public enum Code: Sendable, Equatable {
        /// Branch B: no unexpired, unused pending authorization of this client with that state.
        case invalidDownstreamState
        /// A parameter is missing, repeated, malformed or not allowed (RFC 6749 `invalid_request`).
        case invalidRequest
        /// The client may not use this flow, or is unknown at /authorize (`unauthorized_client`).
        case unauthorizedClient
        /// Client authentication failed at the token endpoint (`invalid_client`, 401).
        case invalidClient
        /// The code or refresh token is invalid, expired, used, or belongs to another client
        /// or redirect URI, or the PKCE verifier does not match (`invalid_grant`).
        case invalidGrant
        /// The requested scope is not allowed or wider than granted (`invalid_scope`).
        case invalidScope
        /// `grant_type` is not `authorization_code` or `refresh_token`.
        case unsupportedGrantType
        /// `response_type` is not `code`.
        case unsupportedResponseType
        /// The realm cannot serve the request as configured (`server_error`).
        case serverError
        /// The database is unreachable right now; retrying later may succeed
        /// (`temporarily_unavailable`, RFC 6749 §4.1.2.1; answered 503 with Retry-After).
        case temporarilyUnavailable
    }

    public let code: Code
    public let message: String

    /// The answer while the database is unreachable.
    public static let storageUnavailable = GrantsError(.temporarilyUnavailable,
                                                       "the service is temporarily unavailable; retry later")

    /// An error with a client-safe message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The RFC 6749 / 7636 error string for this code.
    public var oauthError: String {
        switch code {
        case .invalidDownstreamState: "invalid_request"
        case .invalidRequest: "invalid_request"
        case .unauthorizedClient: "unauthorized_client"
        case .invalidClient: "invalid_client"
        case .invalidGrant: "invalid_grant"
        case .invalidScope: "invalid_scope"
        case .unsupportedGrantType: "unsupported_grant_type"
        case .unsupportedResponseType: "unsupported_response_type"
        case .serverError: "server_error"
        case .temporarilyUnavailable: "temporarily_unavailable"
        }
    }

    public var description: String { "GrantsError(\(code)): \(message)" }
}

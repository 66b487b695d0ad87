import Storage

/// Why a native login failed. Carries only what is safe to log and show: never a token,
/// nonce or email.
public struct NativeLoginError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable reasons, each mapped to one contract error code by the route.
    public enum Code: String, Sendable, Equatable {
        /// The request itself could not be read (the route's own validation).
        case badRequest = "bad_request"
        case realmNotFound = "not_found"
        case providerNotConfigured = "provider_not_configured"
        case unknownClient = "unknown_client"
        case clientNotAllowed = "client_not_allowed"
        case tokenTooLarge = "token_too_large"
        case invalidAppleToken = "invalid_apple_token"
        case appleUnavailable = "apple_unavailable"
        case registrationDisabled = "registration_disabled"
        case accountDisabled = "account_disabled"
        case invalidDownstreamState = "invalid_downstream_state"
        case rateLimited = "rate_limited"
        /// The database is unreachable right now; nothing was committed (503, retry).
        case serviceUnavailable = "service_unavailable"
        case internalFailure = "internal_error"
    }

    public let code: Code
    /// For `invalidAppleToken`: the first failed check.
    public let appleReason: AppleRejectionReason?
    /// For `rateLimited` and `appleUnavailable`.
    public let retryAfterSeconds: Int?
    /// The account involved, when one was resolved (for the log line).
    public let accountID: String?

    /// An error with its code and the details that code uses.
    public init(_ code: Code, appleReason: AppleRejectionReason? = nil, retryAfterSeconds: Int? = nil,
                accountID: String? = nil) {
        self.code = code
        self.appleReason = appleReason
        self.retryAfterSeconds = retryAfterSeconds
        self.accountID = accountID
    }

    /// The reason label for logs and metrics: the Apple check, else the code.
    public var reason: String { appleReason?.rawValue ?? code.rawValue }

    /// Whether the attempt counts against the (realm, IP) failure limit: the caller's fault,
    /// not an outage or our own failure, and not the limit itself.
    public var countsAsFailure: Bool {
        switch code {
        case .appleUnavailable, .serviceUnavailable, .internalFailure, .rateLimited, .realmNotFound: false
        default: true
        }
    }

    public var description: String { "NativeLoginError(\(reason))" }

    /// The answer for a failure that is not the request's: `serviceUnavailable` when the
    /// database is unreachable right now (or stayed busy past its retries), else `internalFailure`.
    static func failure(_ error: any Error) -> NativeLoginError {
        if let storage = error as? StorageError, storage.isTemporary { return NativeLoginError(.serviceUnavailable) }
        return NativeLoginError(.internalFailure)
    }
}

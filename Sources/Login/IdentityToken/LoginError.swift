import Storage

/// Why a login failed: the one error both doors (native, web) answer from. Carries only what
/// is safe to log and show: never a token, nonce or email.
public struct LoginError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable reasons, each mapped to one contract error code by the server.
    public enum Code: String, Sendable, Equatable {
        /// The request itself could not be read (the door's own validation).
        case badRequest = "bad_request"
        case realmNotFound = "not_found"
        case providerNotConfigured = "provider_not_configured"
        case unknownClient = "unknown_client"
        case clientNotAllowed = "client_not_allowed"
        case tokenTooLarge = "token_too_large"
        /// The identity token was refused; `providerReason` names the check.
        case invalidIdentityToken = "invalid_identity_token"
        /// The provider's keys could not be had; `providerReason` is its label (`apple_unavailable`).
        case providerUnavailable = "provider_unavailable"
        case registrationDisabled = "registration_disabled"
        case accountDisabled = "account_disabled"
        case invalidDownstreamState = "invalid_downstream_state"
        case rateLimited = "rate_limited"
        /// The database is unreachable right now; nothing was committed (503, retry).
        case serviceUnavailable = "service_unavailable"
        case internalFailure = "internal_error"
    }

    /// The rejection reason of a token whose single-use claim was taken before.
    public static let replayedReason = "replayed"

    public let code: Code
    /// The provider's word for it: for `invalidIdentityToken` the first failed check, for
    /// `providerUnavailable` its label.
    public let providerReason: String?
    /// For `rateLimited` and `providerUnavailable`.
    public let retryAfterSeconds: Int?
    /// The account involved, when one was resolved (for the log line).
    public let accountID: String?
    /// For an outage of ours (`serviceUnavailable`, `internalFailure`): why, for the log line
    /// only (the storage error's SQLSTATE and message, or the error's type); never answered.
    public var cause: String?

    /// An error with its code and the details that code uses.
    public init(_ code: Code, providerReason: String? = nil, retryAfterSeconds: Int? = nil, accountID: String? = nil) {
        self.code = code
        self.providerReason = providerReason
        self.retryAfterSeconds = retryAfterSeconds
        self.accountID = accountID
    }

    /// The reason label for logs, metrics and security events: the provider's, else the code.
    public var reason: String { providerReason ?? code.rawValue }

    /// Whether the attempt counts against the (realm, IP) failure limit: the caller's fault,
    /// not an outage (`isOutage`), and not the limit itself or a realm that is not there.
    public var countsAsFailure: Bool { !isOutage && code != .rateLimited && code != .realmNotFound }

    /// Whether the attempt failed for want of us or the provider (our failure, the database or
    /// the provider's keys unavailable), not for anything the caller sent: logged and counted
    /// as an `error` rather than a `rejected` login, and never against the failure limit.
    public var isOutage: Bool {
        switch code {
        case .internalFailure, .serviceUnavailable, .providerUnavailable: true
        case .badRequest, .realmNotFound, .providerNotConfigured, .unknownClient, .clientNotAllowed, .tokenTooLarge,
             .invalidIdentityToken, .registrationDisabled, .accountDisabled, .invalidDownstreamState, .rateLimited: false
        }
    }

    /// Whether the pipeline got as far as finding the request's client (enabled), so the client
    /// id may be logged: before that it is whatever the caller typed. Refusals decided before
    /// the client check (an unreadable request, no realm, the limit, no provider, an oversized
    /// token) and failures that may come at any point (ours, the database's) say no.
    public var clientResolved: Bool {
        switch code {
        case .badRequest, .realmNotFound, .rateLimited, .providerNotConfigured, .unknownClient, .tokenTooLarge,
             .internalFailure, .serviceUnavailable: false
        case .clientNotAllowed, .invalidIdentityToken, .providerUnavailable, .registrationDisabled, .accountDisabled,
             .invalidDownstreamState: true
        }
    }

    public var description: String { "LoginError(\(reason))" }

    /// The answer for a failure that is not the request's: `serviceUnavailable` when the
    /// database is unreachable right now (or stayed busy past its retries), else `internalFailure`.
    static func failure(_ error: any Error) -> LoginError {
        var failure = LoginError((error as? StorageError)?.isTemporary == true ? .serviceUnavailable : .internalFailure)
        failure.cause = (error as? StorageError)?.cause ?? String(describing: type(of: error))
        return failure
    }
}

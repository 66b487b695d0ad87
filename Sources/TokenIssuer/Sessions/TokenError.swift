/// Why a session operation was refused. The description never holds a token.
public struct TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, stable for callers to switch on.
    public enum Code: String, Sendable, Equatable {
        /// Unknown refresh token (or one of another realm).
        case invalidGrant
        /// A rotated refresh token was presented again; its whole session is now revoked.
        case reuseDetected
        /// The session reached its absolute expiry.
        case expired
        /// The session went unused (no refresh) for longer than its idle timeout
        /// (`refreshIdleTTL`); it ended, like an expired one.
        case idleExpired
        /// The session was revoked (logout, admin, account or client disabled), or its client
        /// was deleted or re-created under its id.
        case revoked
        /// The refresh token belongs to another client.
        case clientMismatch
        /// The first-party session API was handed a session of a client it does not serve
        /// (confidential or third-party); nothing changed.
        case clientNotAllowed
        /// The session is bound to another IP address.
        case ipMismatch
        case accountDisabled
        case accountDeleted
        /// The requested scope is not within the session's scope.
        case invalidScope
        /// The realm does not exist or has no active signing key.
        case noSigningKey
        /// The database or signing failed; answer 500, the token is not at fault.
        case storageFailure
        /// The realm's settings changed since the caller read them (`settingsStamp` of
        /// `SessionStore.refresh`); nothing changed: read them again and refresh again.
        case settingsChanged
        /// The database is unreachable right now; nothing changed, the same token can be
        /// presented again later (answer 503 with Retry-After, never a refusal of the token).
        case storageUnavailable
    }

    public let code: Code

    /// An error with this code.
    public init(_ code: Code) { self.code = code }

    public var description: String { "TokenError(\(code.rawValue))" }
}

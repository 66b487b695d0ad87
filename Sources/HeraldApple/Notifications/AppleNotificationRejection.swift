/// Why a notification payload was refused (400 `invalid_notification`, `details.reason`).
/// Reuses the identity-token reasons where the check is the same, plus what only
/// notifications have.
public enum AppleNotificationRejection: Sendable, Equatable {
    /// A check shared with identity tokens failed (structure, algorithm, key, signature,
    /// issuer, audience, `iat`).
    case token(AppleRejectionReason)
    /// No usable `events` (neither an object nor a JSON string of one, nor top-level
    /// `type`/`sub`), or no `jti`.
    case missingEvent

    /// The wire reason.
    public var reason: String {
        switch self {
        case .token(let reason): reason.rawValue
        case .missingEvent: "missing_event"
        }
    }
}

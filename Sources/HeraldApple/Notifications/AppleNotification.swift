import JOSE

/// One verified server-to-server notification from Apple ("Processing changes for Sign in with
/// Apple accounts"): who it is about and what changed.
public struct AppleNotification: Sendable, Equatable {
    /// What Apple reports. Types Herald does not know are kept (and acknowledged) as `other`.
    public enum EventType: Sendable, Equatable {
        /// The user stopped using Sign in with Apple with the app: unlink the identity.
        case consentRevoked
        /// The user deleted their Apple account: delete Herald's account.
        case accountDelete
        /// Mail to the private relay address is forwarded again / no longer forwarded.
        case emailEnabled
        case emailDisabled
        case other(String)

        init(_ raw: String) {
            switch raw {
            case "consent-revoked": self = .consentRevoked
            case "account-delete", "account-deleted": self = .accountDelete
            case "email-enabled": self = .emailEnabled
            case "email-disabled": self = .emailDisabled
            default: self = .other(raw)
            }
        }

        /// The wire name, as logged, audited and counted (unknown types as `other`, since the
        /// name comes from outside and must not grow a metric's label set).
        public var label: String {
            switch self {
            case .consentRevoked: "consent-revoked"
            case .accountDelete: "account-delete"
            case .emailEnabled: "email-enabled"
            case .emailDisabled: "email-disabled"
            case .other: "other"
            }
        }
    }

    /// The notification's `jti`: the key of idempotent processing.
    public let id: String
    public let type: EventType
    /// Apple's `sub` of the user the event is about.
    public let subject: String
}

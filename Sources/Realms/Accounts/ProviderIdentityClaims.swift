/// What a verified provider login says about the person, as account resolution needs it.
public struct ProviderIdentityClaims: Sendable, Equatable {
    /// `apple`.
    public var provider: String
    /// The provider's stable subject (Apple's `sub`).
    public var subject: String
    public var email: String?
    /// Whether the provider vouches for the email.
    public var emailVerified: Bool
    /// A private-relay address: real and deliverable, flagged on the account.
    public var isPrivateEmail: Bool
    /// The name the app passed along (Apple gives it only on the first authorization).
    public var name: PersonName

    /// Claims with every field given (`name` optional).
    public init(provider: String, subject: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool,
                name: PersonName = PersonName()) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.name = name
    }
}

/// The account a login resolved to.
public struct AccountResolution: Sendable, Equatable {
    public let account: Account
    /// The account was created by this login.
    public let isNewUser: Bool
    /// The identity was linked to an existing account by its verified email.
    public let linkedByEmail: Bool
}

/// Why a login cannot resolve to an account.
public struct AccountResolutionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable reasons to switch on.
    public enum Code: String, Sendable, Equatable {
        /// No account matched and the realm does not allow registration.
        case registrationDisabled
        /// The matching account is disabled.
        case accountDisabled
    }

    public let code: Code

    /// An error with this code.
    public init(_ code: Code) { self.code = code }

    public var description: String { "AccountResolutionError(\(code.rawValue))" }
}

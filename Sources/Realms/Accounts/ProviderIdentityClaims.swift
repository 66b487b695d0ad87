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
    /// The profile photo's URL (Google's `picture`; Apple never sends one). Kept only when
    /// `InputRules.pictureURLProblem` accepts it.
    public var picture: String?

    /// Claims with every field given (`name` and `picture` optional).
    public init(provider: String, subject: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool,
                name: PersonName = PersonName(), picture: String? = nil) {
        self.provider = provider
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.name = name
        self.picture = picture
    }
}

/// The account a login resolved to.
public struct AccountResolution: Sendable, Equatable {
    public let account: Account
    /// The account was created by this login.
    public let isNewUser: Bool
    /// The identity was linked to an existing account by its verified email.
    public let linkedByEmail: Bool
    /// The account's identities as this login leaves them, when the resolution read them with
    /// the account (a returning login); nil when it linked or created (read them afterwards).
    public var identities: [Identity]? = nil
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

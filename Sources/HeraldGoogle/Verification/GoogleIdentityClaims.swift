import Foundation
import Realms

/// The verified facts a Google ID token establishes about the signed-in user.
public struct GoogleIdentityClaims: Sendable, Equatable {
    /// Google's stable user identifier (`sub`).
    public var subject: String
    /// `email`, when the app asked for the email scope.
    public var email: String?
    /// `email_verified` (a boolean, or the string "true"/"false"); false when absent.
    public var emailVerified: Bool
    /// `hd`: the Google Workspace domain of the account, absent for consumer accounts.
    public var hostedDomain: String?
    /// `name`, `given_name` and `family_name`.
    public var name: PersonName
    /// `picture`: the profile photo's URL, kept on the account on its first sign-in (filled
    /// later only while the account has none) when it is a plain https URL.
    public var picture: String?
    /// The token audience that matched the realm's client ids.
    public var audience: String
    /// `iat`.
    public var issuedAt: Date
    /// `exp`.
    public var expiresAt: Date

    /// Creates claims (tests and callers that build them by hand).
    public init(subject: String, email: String?, emailVerified: Bool, hostedDomain: String?, name: PersonName,
                picture: String?, audience: String, issuedAt: Date, expiresAt: Date) {
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.hostedDomain = hostedDomain
        self.name = name
        self.picture = picture
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
    }
}

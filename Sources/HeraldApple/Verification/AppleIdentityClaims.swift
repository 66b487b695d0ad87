import Foundation

/// The verified facts an Apple identity token establishes about the signed-in user.
public struct AppleIdentityClaims: Sendable, Equatable {
    /// Apple's stable user identifier for the team (`sub`).
    public var subject: String
    /// The email Apple shares, possibly a private-relay address; absent after the first authorization.
    public var email: String?
    /// `email_verified`, accepted as a boolean or the string "true"/"false"; false when absent.
    public var emailVerified: Bool
    /// `is_private_email` (boolean or string), or true when the email is a private-relay address.
    public var isPrivateEmail: Bool
    /// The token audience that matched the realm's audiences.
    public var audience: String
    /// `iat`.
    public var issuedAt: Date
    /// `exp`.
    public var expiresAt: Date
    /// The `nonce` claim (the hex SHA-256 of the raw nonce), when present.
    public var nonce: String?
    /// `auth_time`, when present.
    public var authTime: Date?

    /// Creates claims (tests and callers that build them by hand).
    public init(subject: String, email: String?, emailVerified: Bool, isPrivateEmail: Bool, audience: String,
                issuedAt: Date, expiresAt: Date, nonce: String?, authTime: Date?) {
        self.subject = subject
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.audience = audience
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.nonce = nonce
        self.authTime = authTime
    }

    /// Apple's private email relay domain; such addresses are real, deliverable emails.
    public static let privateRelayDomain = "privaterelay.appleid.com"
}

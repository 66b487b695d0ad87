import JOSE
import ProviderKeys

/// The claims of an Apple identity token, typed but not yet checked.
///
/// Decoding decides `malformed`: `sub`, `exp` and `iat` are required; every claim a check
/// reads must have its JSON type. An absent `iss` or `aud` is left to the issuer and audience
/// checks, which then fail with their own reason.
struct AppleTokenClaimSet: Sendable {
    var subject: String
    var issuer: String?
    var audiences: [String]
    var expiresAt: Double
    var issuedAt: Double
    var notBefore: Double?
    var nonce: String?
    var email: String?
    var emailVerified: Bool
    var isPrivateEmail: Bool
    var authTime: Double?

    /// Why the claims are malformed (the shared reader's failure: it names the claim, never its value).
    typealias DecodingFailure = ClaimReader.Failure

    init(_ object: [String: JSONValue]) throws(DecodingFailure) {
        guard let sub = object["sub"] else { throw DecodingFailure(detail: "claim sub is missing") }
        guard let subject = sub.stringValue, !subject.isEmpty else {
            throw DecodingFailure(detail: "claim sub is not a non-empty string")
        }
        // Apple's subjects are short ("001234.<32 hex>.0042"); the cap keeps an outsized one
        // out of the identities table and the replay store.
        guard subject.utf8.count <= Self.maximumSubjectBytes else {
            throw DecodingFailure(detail: "claim sub is over \(Self.maximumSubjectBytes) bytes")
        }
        self.subject = subject
        issuer = try ClaimReader.string(object, "iss")
        audiences = try ClaimReader.audiences(object["aud"])
        guard let expiresAt = try ClaimReader.numericDate(object, "exp") else {
            throw DecodingFailure(detail: "claim exp is missing")
        }
        self.expiresAt = expiresAt
        guard let issuedAt = try ClaimReader.numericDate(object, "iat") else {
            throw DecodingFailure(detail: "claim iat is missing")
        }
        self.issuedAt = issuedAt
        // Both are bounded, so the difference is exact. Apple never issues a longer lifetime,
        // and one would keep a stolen token (and its replay record) alive as long as it says.
        guard expiresAt - issuedAt <= Self.maximumLifetimeSeconds else {
            throw DecodingFailure(detail: "claim exp is more than \(Int64(Self.maximumLifetimeSeconds)) s after iat")
        }
        notBefore = try ClaimReader.numericDate(object, "nbf")
        authTime = try ClaimReader.numericDate(object, "auth_time")
        nonce = try ClaimReader.string(object, "nonce")
        email = try ClaimReader.string(object, "email")
        emailVerified = try ClaimReader.flexibleBool(object, "email_verified") ?? false
        let relay = email.map { $0.lowercased().hasSuffix("@" + AppleIdentityClaims.privateRelayDomain) } ?? false
        isPrivateEmail = (try ClaimReader.flexibleBool(object, "is_private_email") ?? false) || relay
    }

    /// The public claims once every check passed.
    func identityClaims(matchedAudience: String) -> AppleIdentityClaims {
        AppleIdentityClaims(
            subject: subject, email: email, emailVerified: emailVerified, isPrivateEmail: isPrivateEmail,
            audience: matchedAudience,
            issuedAt: .init(timeIntervalSince1970: issuedAt), expiresAt: .init(timeIntervalSince1970: expiresAt),
            nonce: nonce, authTime: authTime.map { .init(timeIntervalSince1970: $0) })
    }

    /// The longest `sub` accepted, in UTF-8 bytes (issue #20).
    static let maximumSubjectBytes = 255

    /// The longest `exp - iat` accepted: Apple's identity tokens live at most a day (issue #20).
    static let maximumLifetimeSeconds: Double = 86_400

    /// The latest time a claim may name: 9999-12-31T23:59:59Z. Apple issues whole seconds
    /// near now; bounding here means every later `+`, `-` and `Int64(…)` on a claim time is
    /// within range (a hostile `1e+20` or `1e308` used to trap the diagnosis's formatting).
    static let latestNumericDate = IdentityTokenBounds.latestNumericDate
}

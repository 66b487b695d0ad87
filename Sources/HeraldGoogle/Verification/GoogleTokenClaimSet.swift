import JOSE
import ProviderKeys
import Realms

/// The claims of a Google ID token, typed but not yet checked.
///
/// Decoding decides `malformed`: `sub`, `exp` and `iat` are required, within the bounds every
/// provider shares (``IdentityTokenBounds``); every claim a check reads must have its JSON type.
/// An absent `iss` or `aud` is left to the issuer and audience checks.
struct GoogleTokenClaimSet: Sendable {
    var subject: String
    var issuer: String?
    var audiences: [String]
    var authorizedParty: String?
    var expiresAt: Double
    var issuedAt: Double
    var notBefore: Double?
    var nonce: String?
    var hostedDomain: String?
    var email: String?
    var emailVerified: Bool
    var name: PersonName
    var picture: String?

    /// Why the claims are malformed (the shared reader's failure: it names the claim, never its value).
    typealias DecodingFailure = ClaimReader.Failure

    init(_ object: [String: JSONValue]) throws(DecodingFailure) {
        guard let subject = try ClaimReader.string(object, "sub"), !subject.isEmpty else {
            throw DecodingFailure(detail: "claim sub is missing or empty")
        }
        guard subject.utf8.count <= IdentityTokenBounds.maximumSubjectBytes else {
            throw DecodingFailure(detail: "claim sub is over \(IdentityTokenBounds.maximumSubjectBytes) bytes")
        }
        self.subject = subject
        issuer = try ClaimReader.string(object, "iss")
        audiences = try ClaimReader.audiences(object["aud"])
        authorizedParty = try ClaimReader.string(object, "azp")
        guard let expiresAt = try ClaimReader.numericDate(object, "exp") else { throw DecodingFailure(detail: "claim exp is missing") }
        guard let issuedAt = try ClaimReader.numericDate(object, "iat") else { throw DecodingFailure(detail: "claim iat is missing") }
        guard expiresAt - issuedAt <= IdentityTokenBounds.maximumLifetimeSeconds else {
            throw DecodingFailure(detail: "claim exp is more than \(Int64(IdentityTokenBounds.maximumLifetimeSeconds)) s after iat")
        }
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        notBefore = try ClaimReader.numericDate(object, "nbf")
        nonce = try ClaimReader.string(object, "nonce")
        hostedDomain = try ClaimReader.string(object, "hd")
        email = try ClaimReader.string(object, "email")
        emailVerified = try ClaimReader.flexibleBool(object, "email_verified") ?? false
        name = PersonName(givenName: try ClaimReader.string(object, "given_name"),
                          familyName: try ClaimReader.string(object, "family_name"),
                          displayName: try ClaimReader.string(object, "name"))
        picture = try ClaimReader.string(object, "picture")
    }
}

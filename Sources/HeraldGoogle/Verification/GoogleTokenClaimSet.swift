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

    /// Why the claims are malformed; the text names the claim, never its value.
    struct DecodingFailure: Error {
        let detail: String
    }

    init(_ object: [String: JSONValue]) throws(DecodingFailure) {
        guard let subject = try Self.optionalString(object, "sub"), !subject.isEmpty else {
            throw DecodingFailure(detail: "claim sub is missing or empty")
        }
        guard subject.utf8.count <= IdentityTokenBounds.maximumSubjectBytes else {
            throw DecodingFailure(detail: "claim sub is over \(IdentityTokenBounds.maximumSubjectBytes) bytes")
        }
        self.subject = subject
        issuer = try Self.optionalString(object, "iss")
        audiences = try Self.audiences(object["aud"])
        authorizedParty = try Self.optionalString(object, "azp")
        guard let expiresAt = try Self.optionalNumber(object, "exp") else { throw DecodingFailure(detail: "claim exp is missing") }
        guard let issuedAt = try Self.optionalNumber(object, "iat") else { throw DecodingFailure(detail: "claim iat is missing") }
        guard expiresAt - issuedAt <= IdentityTokenBounds.maximumLifetimeSeconds else {
            throw DecodingFailure(detail: "claim exp is more than \(Int64(IdentityTokenBounds.maximumLifetimeSeconds)) s after iat")
        }
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
        notBefore = try Self.optionalNumber(object, "nbf")
        nonce = try Self.optionalString(object, "nonce")
        hostedDomain = try Self.optionalString(object, "hd")
        email = try Self.optionalString(object, "email")
        emailVerified = try Self.flexibleBool(object, "email_verified") ?? false
        name = PersonName(givenName: try Self.optionalString(object, "given_name"),
                          familyName: try Self.optionalString(object, "family_name"),
                          displayName: try Self.optionalString(object, "name"))
        picture = try Self.optionalString(object, "picture")
    }

    private static func optionalString(_ object: [String: JSONValue], _ name: String) throws(DecodingFailure) -> String? {
        switch object[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw DecodingFailure(detail: "claim \(name) is not a string")
        }
    }

    /// A NumericDate claim: whole seconds from 0 to the shared latest date, else malformed.
    private static func optionalNumber(_ object: [String: JSONValue], _ name: String) throws(DecodingFailure) -> Double? {
        switch object[name] {
        case nil, .null?: return nil
        case .number(let value)?:
            let latest = IdentityTokenBounds.latestNumericDate
            guard value.isFinite, value == value.rounded(.towardZero), value >= 0, value <= latest else {
                throw DecodingFailure(detail: "claim \(name) is not a whole number of seconds from 0 to \(Int64(latest))")
            }
            return value
        default: throw DecodingFailure(detail: "claim \(name) is not a number")
        }
    }

    /// Google sends `email_verified` as a boolean; older tokens used the string form.
    private static func flexibleBool(_ object: [String: JSONValue], _ name: String) throws(DecodingFailure) -> Bool? {
        switch object[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case .string("true")?: return true
        case .string("false")?: return false
        default: throw DecodingFailure(detail: "claim \(name) is neither a boolean nor \"true\"/\"false\"")
        }
    }

    private static func audiences(_ value: JSONValue?) throws(DecodingFailure) -> [String] {
        switch value {
        case nil, .null?: return []
        case .string(let audience)?: return [audience]
        case .array(let items)?:
            var result: [String] = []
            for item in items {
                guard case .string(let audience) = item else {
                    throw DecodingFailure(detail: "claim aud is an array with a non-string element")
                }
                result.append(audience)
            }
            return result
        default: throw DecodingFailure(detail: "claim aud is neither a string nor an array of strings")
        }
    }
}

import JOSE

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

    /// Why the claims are malformed; the text names the claim, never its value.
    struct DecodingFailure: Error {
        let detail: String
    }

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
        issuer = try Self.optionalString(object, "iss")
        audiences = try Self.audiences(object["aud"])
        guard let expiresAt = try Self.optionalNumber(object, "exp") else {
            throw DecodingFailure(detail: "claim exp is missing")
        }
        self.expiresAt = expiresAt
        guard let issuedAt = try Self.optionalNumber(object, "iat") else {
            throw DecodingFailure(detail: "claim iat is missing")
        }
        self.issuedAt = issuedAt
        // Both are bounded, so the difference is exact. Apple never issues a longer lifetime,
        // and one would keep a stolen token (and its replay record) alive as long as it says.
        guard expiresAt - issuedAt <= Self.maximumLifetimeSeconds else {
            throw DecodingFailure(detail: "claim exp is more than \(Int64(Self.maximumLifetimeSeconds)) s after iat")
        }
        notBefore = try Self.optionalNumber(object, "nbf")
        authTime = try Self.optionalNumber(object, "auth_time")
        nonce = try Self.optionalString(object, "nonce")
        email = try Self.optionalString(object, "email")
        emailVerified = try Self.flexibleBool(object, "email_verified") ?? false
        let relay = email.map { $0.lowercased().hasSuffix("@" + AppleIdentityClaims.privateRelayDomain) } ?? false
        isPrivateEmail = (try Self.flexibleBool(object, "is_private_email") ?? false) || relay
    }

    /// The public claims once every check passed.
    func identityClaims(matchedAudience: String) -> AppleIdentityClaims {
        AppleIdentityClaims(
            subject: subject, email: email, emailVerified: emailVerified, isPrivateEmail: isPrivateEmail,
            audience: matchedAudience,
            issuedAt: .init(timeIntervalSince1970: issuedAt), expiresAt: .init(timeIntervalSince1970: expiresAt),
            nonce: nonce, authTime: authTime.map { .init(timeIntervalSince1970: $0) })
    }

    private static func optionalString(_ object: [String: JSONValue], _ name: String) throws(DecodingFailure) -> String? {
        switch object[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw DecodingFailure(detail: "claim \(name) is not a string")
        }
    }

    /// The longest `sub` accepted, in UTF-8 bytes (issue #20).
    static let maximumSubjectBytes = 255

    /// The longest `exp - iat` accepted: Apple's identity tokens live at most a day (issue #20).
    static let maximumLifetimeSeconds: Double = 86_400

    /// The latest time a claim may name: 9999-12-31T23:59:59Z. Apple issues whole seconds
    /// near now; bounding here means every later `+`, `-` and `Int64(…)` on a claim time is
    /// within range (a hostile `1e+20` or `1e308` used to trap the diagnosis's formatting).
    static let latestNumericDate: Double = 253_402_300_799

    /// A NumericDate claim: whole seconds from 0 to `latestNumericDate`, else malformed.
    private static func optionalNumber(_ object: [String: JSONValue], _ name: String) throws(DecodingFailure) -> Double? {
        switch object[name] {
        case nil, .null?: return nil
        case .number(let value)?:
            guard value.isFinite, value == value.rounded(.towardZero), value >= 0, value <= latestNumericDate else {
                throw DecodingFailure(detail: "claim \(name) is not a whole number of seconds from 0 to \(Int64(latestNumericDate))")
            }
            return value
        default: throw DecodingFailure(detail: "claim \(name) is not a number")
        }
    }

    /// Apple has sent these flags both as JSON booleans and as the strings "true"/"false".
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

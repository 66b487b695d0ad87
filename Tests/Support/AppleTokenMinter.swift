import Foundation
import JOSE

/// Everything that goes into one fake Apple identity token; change one field to break one check.
public struct AppleTokenSpec: Sendable {
    /// Header `alg` as written (may be "none", "HS256", …).
    public var alg: String
    /// Header `kid`; nil leaves it out.
    public var kid: String?
    /// The key that signs; ignored for "none" and HS*.
    public var signingKey: PrivateKey
    /// The algorithm actually used to sign (defaults to the header alg when it is RS256/ES256).
    public var signingAlgorithm: JWSAlgorithm?
    /// The claims, as JSON values (so a test can send `"true"` strings or wrong types).
    public var claims: [String: JSONValue]
    /// Extra header members (e.g. `crit`).
    public var extraHeader: [String: JSONValue] = [:]
    /// Flip one signature bit after signing.
    public var tamperSignature = false
    /// Leave the signature segment empty (a classic `alg: none` token).
    public var emptySignature = false
}

/// Mints Apple-shaped identity tokens signed by ``FakeAppleKeys``.
public struct AppleTokenMinter: Sendable {
    public static let defaultAudience = "com.example.herald.ios"
    public static let defaultSubject = "001234.abcdef0123456789.0042"
    public static let defaultRawNonce = "raw-nonce-7c1f0e"

    public let keys: FakeAppleKeys
    public let now: Date

    /// A minter whose tokens are issued at `now`, valid 10 minutes.
    public init(keys: FakeAppleKeys, now: Date) {
        self.keys = keys
        self.now = now
    }

    /// Lowercase hex SHA-256 of a raw nonce, as the iOS app sends it to Apple.
    public static func nonceClaim(for raw: String) -> String {
        SHA256.hexDigest(raw)
    }

    /// A valid RS256 token's ingredients: Apple's issuer, the default audience, a nonce claim
    /// for ``defaultRawNonce``, an email marked verified.
    public func validSpec() -> AppleTokenSpec {
        let issued = now.timeIntervalSince1970.rounded(.down)
        return AppleTokenSpec(
            alg: "RS256", kid: keys.rsaKeyID, signingKey: keys.rsa, signingAlgorithm: nil,
            claims: [
                "iss": .string("https://appleid.apple.com"),
                "aud": .string(Self.defaultAudience),
                "sub": .string(Self.defaultSubject),
                "iat": .number(issued),
                "exp": .number(issued + 600),
                "auth_time": .number(issued),
                "nonce": .string(Self.nonceClaim(for: Self.defaultRawNonce)),
                "nonce_supported": .bool(true),
                "email": .string("someone@example.com"),
                "email_verified": .bool(true),
            ])
    }

    /// A valid token, changed by `customize`.
    public func token(_ customize: (inout AppleTokenSpec) -> Void = { _ in }) -> String {
        var spec = validSpec()
        customize(&spec)
        return mint(spec)
    }

    /// Serializes and signs a spec. Built by hand (not CompactJWS.sign) so broken headers are possible.
    public func mint(_ spec: AppleTokenSpec) -> String { Self.serialize(spec) }

    /// Serializes and signs any spec (Google's minter uses it too).
    public static func serialize(_ spec: AppleTokenSpec) -> String {
        var header: [String: JSONValue] = ["alg": .string(spec.alg)]
        if let kid = spec.kid { header["kid"] = .string(kid) }
        for (name, value) in spec.extraHeader { header[name] = value }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let headerPart = Base64URL.encode(Array(try! encoder.encode(JSONValue.object(header))))
        let payloadPart = Base64URL.encode(Array(try! encoder.encode(JSONValue.object(spec.claims))))
        let signingInput = Array("\(headerPart).\(payloadPart)".utf8)

        var signature: [UInt8]
        if let algorithm = spec.signingAlgorithm ?? JWSAlgorithm(rawValue: spec.alg) {
            signature = try! spec.signingKey.sign(message: signingInput, algorithm: algorithm)
        } else if spec.alg.uppercased().hasPrefix("HS") {
            signature = HMACSHA256.authenticate(key: Array("shared-secret".utf8), message: signingInput)
        } else {
            // "none" and unknown algs: filler bytes, so only the alg (not the structure) is wrong.
            signature = [UInt8](repeating: 0x5A, count: 32)
        }
        if spec.tamperSignature, !signature.isEmpty { signature[signature.count / 2] ^= 0x01 }
        if spec.emptySignature { signature = [] }
        return "\(headerPart).\(payloadPart).\(Base64URL.encode(signature))"
    }
}

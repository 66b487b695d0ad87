/// A public JSON Web Key (RFC 7517) for RSA, EC or OKP keys; members optional as in
/// RFC 7518 §6 and RFC 8037 §2. Private members (`d`, …) are deliberately not modelled.
public struct JWK: Codable, Sendable, Equatable {
    /// Key type: "RSA", "EC" or "OKP".
    public var kty: String
    /// Key id, matched against a JWS header's `kid`.
    public var kid: String?
    /// Intended use; "sig" for signing keys.
    public var use: String?
    /// Intended algorithm ("RS256", "ES256", "EdDSA").
    public var alg: String?
    /// RSA modulus, base64url big-endian.
    public var n: String?
    /// RSA public exponent, base64url big-endian.
    public var e: String?
    /// Curve: "P-256" (EC) or "Ed25519" (OKP).
    public var crv: String?
    /// EC x coordinate, or the OKP public key.
    public var x: String?
    /// EC y coordinate.
    public var y: String?

    /// A JWK from its members.
    public init(kty: String, kid: String? = nil, use: String? = nil, alg: String? = nil, n: String? = nil,
                e: String? = nil, crv: String? = nil, x: String? = nil, y: String? = nil) {
        self.kty = kty
        self.kid = kid
        self.use = use
        self.alg = alg
        self.n = n
        self.e = e
        self.crv = crv
        self.x = x
        self.y = y
    }

    /// The key as a verifier. RSA below 2048 bits is rejected, EC only on P-256 (point checked on
    /// the curve), OKP only Ed25519; an `alg` member must be supported and fit the key type.
    public func publicKey() throws(JOSEError) -> PublicKey {
        let expectedAlgorithm: JWSAlgorithm
        switch kty {
        case "RSA": expectedAlgorithm = .rs256
        case "EC":
            guard crv == "P-256" else { throw JOSEError(.unsupportedKeyType, "only the P-256 curve is supported") }
            expectedAlgorithm = .es256
        case "OKP":
            guard crv == "Ed25519" else { throw JOSEError(.unsupportedKeyType, "only the Ed25519 curve is supported") }
            expectedAlgorithm = .edDSA
        default:
            throw JOSEError(.unsupportedKeyType, "unsupported JWK key type")
        }
        if let alg {
            guard let algorithm = JWSAlgorithm(rawValue: alg) else { throw JOSEError(.unsupportedAlgorithm, "unsupported JWK algorithm") }
            guard algorithm == expectedAlgorithm else { throw JOSEError(.keyAlgorithmMismatch, "JWK algorithm does not fit its key type") }
        }
        switch expectedAlgorithm {
        case .rs256:
            return try PublicKey.rsa(modulus: Self.member(n, "n"), exponent: Self.member(e, "e"))
        case .es256:
            return try PublicKey.ecP256(x: Self.member(x, "x"), y: Self.member(y, "y"))
        case .edDSA:
            return try PublicKey.ed25519(x: Self.member(x, "x"))
        }
    }

    private static func member(_ value: String?, _ name: StaticString) throws(JOSEError) -> [UInt8] {
        guard let value else { throw JOSEError(.malformed, "JWK member \(name) is missing") }
        guard let bytes = Base64URL.decode(value) else { throw JOSEError(.malformed, "JWK member \(name) is not base64url") }
        return bytes
    }

    /// The JWK as a JSON object value.
    var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["kty": .string(kty)]
        for (name, value) in [("kid", kid), ("use", use), ("alg", alg), ("n", n), ("e", e), ("crv", crv), ("x", x), ("y", y)] {
            if let value { members[name] = .string(value) }
        }
        return .object(members)
    }

    /// A JWK from a parsed JSON object; nil if `kty` is missing or a modelled member is not a string.
    init?(jsonObject members: [String: JSONValue]) {
        func string(_ name: String) -> String?? {
            guard let value = members[name] else { return .some(nil) }
            guard let string = value.stringValue else { return nil }
            return .some(string)
        }
        guard let kty = members["kty"]?.stringValue,
              let kid = string("kid"), let use = string("use"), let alg = string("alg"),
              let n = string("n"), let e = string("e"), let crv = string("crv"), let x = string("x"), let y = string("y") else {
            return nil
        }
        self.init(kty: kty, kid: kid, use: use, alg: alg, n: n, e: e, crv: crv, x: x, y: y)
    }
}

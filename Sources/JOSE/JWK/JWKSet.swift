/// A JWK Set (RFC 7517 §5) parsed into verifiers by `kid`. Entries that are malformed, of an
/// unsupported type or algorithm, not for signatures, without a `kid`, or repeating a `kid` are
/// skipped and counted: one bad key in a provider's set must not disable the good ones.
public struct JWKSet: Sendable {
    /// Verifiers by key id.
    public let keys: [String: PublicKey]
    /// How many entries were skipped.
    public let skippedCount: Int

    /// A set from already-built keys.
    public init(keys: [String: PublicKey], skippedCount: Int = 0) {
        self.keys = keys
        self.skippedCount = skippedCount
    }

    /// The verifier for `kid`, if present.
    public subscript(kid: String) -> PublicKey? { keys[kid] }

    /// Parses a JWKS document. Throws only when the document is not a JSON object with a "keys" array.
    public static func parse(_ data: [UInt8]) throws(JOSEError) -> JWKSet {
        let document = try StrictJSONParser.parseObject(data)
        guard let entries = document["keys"]?.arrayValue else { throw JOSEError(.malformed, "JWKS has no \"keys\" array") }
        var keys: [String: PublicKey] = [:]
        var skipped = 0
        for entry in entries {
            guard let members = entry.objectValue, let jwk = JWK(jsonObject: members),
                  let kid = jwk.kid, keys[kid] == nil,
                  jwk.use == nil || jwk.use == "sig",
                  let key = try? jwk.publicKey() else {
                skipped += 1
                continue
            }
            keys[kid] = key
        }
        return JWKSet(keys: keys, skippedCount: skipped)
    }

    /// A `{"keys":[…]}` JWKS document.
    public static func document(_ keys: [JWK]) -> [UInt8] {
        JSONValue.object(["keys": .array(keys.map(\.jsonValue))]).serialized()
    }
}

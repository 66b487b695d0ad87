/// The registered JOSE header members Herald reads and writes (RFC 7515 §4.1).
public struct JOSEHeader: Codable, Sendable, Equatable {
    /// Algorithm name as written; map with `JWSAlgorithm(rawValue:)` (unknown names stay unknown).
    public var alg: String
    /// Key id.
    public var kid: String?
    /// Media type ("JWT", "at+jwt").
    public var typ: String?
    /// Extensions the recipient must understand; never empty when present (RFC 7515 §4.1.11).
    public var crit: [String]?

    /// A header from its members.
    public init(alg: String, kid: String? = nil, typ: String? = nil, crit: [String]? = nil) {
        self.alg = alg
        self.kid = kid
        self.typ = typ
        self.crit = crit
    }

    /// A header for signing with `algorithm`.
    public init(algorithm: JWSAlgorithm, kid: String? = nil, typ: String? = nil) {
        self.init(alg: algorithm.rawValue, kid: kid, typ: typ)
    }

    /// Reads the registered members of a parsed header object; wrong types are malformed.
    init(jsonObject members: [String: JSONValue]) throws(JOSEError) {
        guard let alg = members["alg"]?.stringValue else { throw JOSEError(.malformed, "JOSE header has no string \"alg\"") }
        self.alg = alg
        kid = try Self.optionalString(members["kid"], "kid")
        typ = try Self.optionalString(members["typ"], "typ")
        if let value = members["crit"] {
            guard let elements = value.arrayValue, !elements.isEmpty else {
                throw JOSEError(.malformed, "JOSE header \"crit\" must be a non-empty array")
            }
            var names: [String] = []
            for element in elements {
                guard let name = element.stringValue else { throw JOSEError(.malformed, "JOSE header \"crit\" must hold strings") }
                names.append(name)
            }
            crit = names
        } else {
            crit = nil
        }
    }

    private static func optionalString(_ value: JSONValue?, _ name: StaticString) throws(JOSEError) -> String? {
        guard let value else { return nil }
        guard let string = value.stringValue else { throw JOSEError(.malformed, "JOSE header \"\(name)\" must be a string") }
        return string
    }

    /// The header as a JSON object value.
    var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["alg": .string(alg)]
        if let kid { members["kid"] = .string(kid) }
        if let typ { members["typ"] = .string(typ) }
        if let crit { members["crit"] = .array(crit.map(JSONValue.string)) }
        return .object(members)
    }
}

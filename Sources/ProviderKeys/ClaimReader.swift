import JOSE

/// Reads one claim of an identity token's payload with the type the JWT profiles give it, for
/// every provider's claim set alike; a claim of the wrong type is a `Failure` that names the
/// claim, never its value.
public enum ClaimReader {
    /// Why the claims are malformed; the text names the claim, never its value.
    public struct Failure: Error, Sendable {
        public let detail: String

        public init(detail: String) {
            self.detail = detail
        }
    }

    /// A string claim, or nil when absent or null.
    public static func string(_ object: [String: JSONValue], _ name: String) throws(Failure) -> String? {
        switch object[name] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw Failure(detail: "claim \(name) is not a string")
        }
    }

    /// A NumericDate claim: whole seconds from 0 to `IdentityTokenBounds.latestNumericDate`.
    public static func numericDate(_ object: [String: JSONValue], _ name: String) throws(Failure) -> Double? {
        switch object[name] {
        case nil, .null?: return nil
        case .number(let value)?:
            let latest = IdentityTokenBounds.latestNumericDate
            guard value.isFinite, value == value.rounded(.towardZero), value >= 0, value <= latest else {
                throw Failure(detail: "claim \(name) is not a whole number of seconds from 0 to \(Int64(latest))")
            }
            return value
        default: throw Failure(detail: "claim \(name) is not a number")
        }
    }

    /// A flag sent as a JSON boolean or as the string "true"/"false" (Apple has sent both, and
    /// older Google tokens used the string form).
    public static func flexibleBool(_ object: [String: JSONValue], _ name: String) throws(Failure) -> Bool? {
        switch object[name] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        case .string("true")?: return true
        case .string("false")?: return false
        default: throw Failure(detail: "claim \(name) is neither a boolean nor \"true\"/\"false\"")
        }
    }

    /// `aud`: one string or an array of strings; empty when absent.
    public static func audiences(_ value: JSONValue?) throws(Failure) -> [String] {
        switch value {
        case nil, .null?: return []
        case .string(let audience)?: return [audience]
        case .array(let items)?:
            var result: [String] = []
            for item in items {
                guard case .string(let audience) = item else {
                    throw Failure(detail: "claim aud is an array with a non-string element")
                }
                result.append(audience)
            }
            return result
        default: throw Failure(detail: "claim aud is neither a string nor an array of strings")
        }
    }
}

/// A JSON value. Numbers are Doubles; booleans stay booleans (never bridged to numbers).
public enum JSONValue: Sendable, Equatable, Codable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses one JSON document strictly (RFC 8259): duplicate object keys, trailing data,
    /// invalid UTF-8, lone surrogates, non-finite numbers and nesting deeper than 64 fail.
    public static func parse(_ bytes: [UInt8]) throws(JOSEError) -> JSONValue {
        try StrictJSONParser.parse(bytes)
    }

    /// Compact JSON (UTF-8) with object keys sorted, so equal values serialize identically.
    /// Integral numbers within ±2^53 are written without a fraction (`1300819380`, not `1.30e9`).
    public func serialized() -> [UInt8] {
        var writer = JSONWriter()
        writer.reserveCapacity(512)  // a token's claims or a response body, without regrowing
        writer.write(self)
        return writer.output
    }

    /// The same JSON (sorted keys, the same escaping and numbers) with one member or element
    /// per line, indented by `spaces` per level: for people to read (`herald diagnose`), not
    /// for the wire.
    public func serialized(indentedBy spaces: Int) -> [UInt8] {
        var writer = JSONWriter(indentWidth: spaces)
        writer.write(self)
        return writer.output
    }

    /// The string, if this is a string.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The number, if this is a number.
    public var doubleValue: Double? { if case .number(let value) = self { value } else { nil } }
    /// The number as an integer, if this is a number with no fractional part that fits Int64.
    public var int64Value: Int64? {
        guard case .number(let value) = self, value.rounded(.towardZero) == value,
              value >= -9.2e18, value <= 9.2e18 else { return nil }
        return Int64(value)
    }
    /// The boolean, if this is a boolean (numbers are not booleans).
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
    /// True for JSON `null`.
    public var isNull: Bool { self == .null }

    /// The member named `key`, if this is an object that has it.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    /// Decodes any JSON value (for use inside Codable models; prefer `parse` for untrusted input).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a JSON value")
        }
    }

    /// Encodes the value as the matching JSON type.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }
}

/// Literals, so claims read as JSON: `["sub": "acct-1", "exp": 1_700_000_000, "email_verified": true]`.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// A string value.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A number value.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A number value.
    public init(floatLiteral value: Double) { self = .number(value) }
    /// A boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An array value.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// An object value; a repeated key keeps the last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// JSON null.
    public init(nilLiteral: ()) { self = .null }
}

/// A small recursive-descent JSON parser (RFC 8259) that is stricter than JSONSerialization:
/// a duplicate key fails (two parsers could otherwise read different claims from one token),
/// booleans never become numbers, and nesting is capped so hostile input cannot exhaust the stack.
struct StrictJSONParser {
    static let maxDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses a whole document: exactly one value, optionally surrounded by whitespace.
    static func parse(_ data: [UInt8]) throws(JOSEError) -> JSONValue {
        try data.withUnsafeBufferPointer { (buffer) throws(JOSEError) -> JSONValue in
            var parser = StrictJSONParser(bytes: buffer)
            parser.skipWhitespace()
            let value = try parser.parseValue()
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw malformed("trailing data after JSON value") }
            return value
        }
    }

    /// Parses a document that must be a JSON object.
    static func parseObject(_ data: [UInt8]) throws(JOSEError) -> [String: JSONValue] {
        guard case .object(let members) = try parse(data) else { throw malformed("JSON is not an object") }
        return members
    }

    private static func malformed(_ reason: String) -> JOSEError { JOSEError(.malformed, reason) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JOSEError) -> JSONValue {
        guard index < bytes.count else { throw Self.malformed("unexpected end of JSON") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw Self.malformed("unexpected character in JSON")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JOSEError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw Self.malformed("invalid JSON literal") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw Self.malformed("invalid JSON literal")
        }
        index += count
    }

    private mutating func enterContainer() throws(JOSEError) {
        depth += 1
        guard depth <= Self.maxDepth else { throw Self.malformed("JSON nested too deeply") }
    }

    private mutating func parseObject() throws(JOSEError) -> JSONValue {
        try enterContainer()
        index += 1  // "{"
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw Self.malformed("expected a string key in JSON object")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Self.malformed("expected ':' in JSON object") }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            guard members.updateValue(value, forKey: key) == nil else { throw Self.malformed("duplicate key in JSON object") }
            skipWhitespace()
            guard index < bytes.count else { throw Self.malformed("unterminated JSON object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                depth -= 1
                return .object(members)
            } else {
                throw Self.malformed("expected ',' or '}' in JSON object")
            }
        }
    }

    private mutating func parseArray() throws(JOSEError) -> JSONValue {
        try enterContainer()
        index += 1  // "["
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw Self.malformed("unterminated JSON array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(elements)
            } else {
                throw Self.malformed("expected ',' or ']' in JSON array")
            }
        }
    }

    private mutating func parseNumber() throws(JOSEError) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        // Integer part: "0" alone, or a non-zero digit followed by digits (no leading zeros).
        guard index < bytes.count, isDigit(bytes[index]) else { throw Self.malformed("invalid JSON number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw Self.malformed("invalid JSON number") }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw Self.malformed("invalid JSON number") }
            skipDigits()
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw Self.malformed("JSON number out of range") }
        return value
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func parseString() throws(JOSEError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, so the bytes between the quotes are the string.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                guard let string = String(validating: slice, as: UTF8.self) else { throw Self.malformed("invalid UTF-8 in JSON string") }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw Self.malformed("control character in JSON string") }
            index += 1
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let string = String(validating: scratch, as: UTF8.self) else { throw Self.malformed("invalid UTF-8 in JSON string") }
                return string
            case UInt8(ascii: "\\"):
                try parseEscape(into: &scratch)
            case 0x00..<0x20:
                throw Self.malformed("control character in JSON string")
            default:
                scratch.append(byte)
            }
        }
        throw Self.malformed("unterminated JSON string")
    }

    private mutating func parseEscape(into scratch: inout [UInt8]) throws(JOSEError) {
        guard index < bytes.count else { throw Self.malformed("unterminated JSON escape") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw Self.malformed("unpaired surrogate in JSON string")
                }
                index += 2
                let low = UInt32(try parseHex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw Self.malformed("unpaired surrogate in JSON string") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw Self.malformed("unpaired surrogate in JSON string")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Self.malformed("invalid JSON escape") }
            scratch.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw Self.malformed("invalid JSON escape")
        }
    }

    private mutating func parseHex4() throws(JOSEError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw Self.malformed("invalid JSON escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Self.malformed("invalid JSON escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }
}

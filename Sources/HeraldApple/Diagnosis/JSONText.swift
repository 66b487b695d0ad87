import JOSE

/// Writes JSON text with a fixed key order for the diagnosis report (Foundation's encoder
/// would sort `checks` before `header`), indented two spaces per level.
enum JSONText {
    /// A JSON value whose object keys keep the order given.
    indirect enum Node {
        case value(JSONValue)
        case object([(String, Node)])
        case array([Node])
    }

    static func render(_ node: Node) -> String {
        var out = ""
        write(node, indent: 0, into: &out)
        return out
    }

    /// A JSON value as a node; its object keys sorted, so output is stable.
    private static func node(_ value: JSONValue) -> Node {
        switch value {
        case .array(let items): .array(items.map(node))
        case .object(let members): .object(members.sorted { $0.key < $1.key }.map { ($0.key, node($0.value)) })
        default: .value(value)
        }
    }

    private static func write(_ node: Node, indent: Int, into out: inout String) {
        let inner = String(repeating: "  ", count: indent + 1)
        let closing = String(repeating: "  ", count: indent)
        switch node {
        case .value(.array), .value(.object):
            if case .value(let value) = node { write(Self.node(value), indent: indent, into: &out) }
        case .value(let value):
            switch value {
            case .null: out += "null"
            case .bool(let flag): out += flag ? "true" : "false"
            case .number(let number): out += format(number)
            case .string(let text): out += quote(text)
            case .array, .object: break  // handled above
            }
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{\n"
            for (index, (key, value)) in members.enumerated() {
                out += inner + quote(key) + ": "
                write(value, indent: indent + 1, into: &out)
                out += index == members.count - 1 ? "\n" : ",\n"
            }
            out += closing + "}"
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "[\n"
            for (index, item) in items.enumerated() {
                out += inner
                write(item, indent: indent + 1, into: &out)
                out += index == items.count - 1 ? "\n" : ",\n"
            }
            out += closing + "]"
        }
    }

    /// Integers (as Apple's times are) print without a fraction.
    static func format(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        if number == number.rounded(), abs(number) < 9_007_199_254_740_992 { return String(Int64(number)) }
        return String(number)
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case let s where s.value < 0x20 || s.value == 0x2028 || s.value == 0x2029:
                let hex = String(s.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

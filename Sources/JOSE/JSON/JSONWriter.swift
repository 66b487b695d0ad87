/// Deterministic JSON serialization (sorted keys) for `JSONValue`: compact, or indented for
/// people to read. Herald's one JSON writer: one escaping and one number format everywhere.
struct JSONWriter {
    private(set) var output: [UInt8] = []
    /// Spaces per nesting level; 0 writes compact JSON (the wire form).
    let indentWidth: Int
    private var depth = 0

    init(indentWidth: Int = 0) {
        self.indentWidth = max(0, indentWidth)
    }

    mutating func reserveCapacity(_ byteCount: Int) { output.reserveCapacity(byteCount) }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): writeNumber(number)
        case .string(let string): JSONEscaping.appendQuoted(string, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(entering: index == 0)
                write(element)
            }
            close(UInt8(ascii: "]"), empty: elements.isEmpty)
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            // Sorted as pairs: sorting the keys and looking each up again hashed every key twice.
            for (index, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(entering: index == 0)
                JSONEscaping.appendQuoted(member.key, to: &output)
                output.append(UInt8(ascii: ":"))
                if indentWidth > 0 { output.append(UInt8(ascii: " ")) }
                write(member.value)
            }
            close(UInt8(ascii: "}"), empty: members.isEmpty)
        }
    }

    /// Indented only: a line break before a member or element, one level deeper than its container.
    private mutating func newline(entering: Bool) {
        guard indentWidth > 0 else { return }
        if entering { depth += 1 }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * indentWidth))
    }

    /// Closes a container; indented, a non-empty one ends on its own line (`{}` and `[]` stay whole).
    private mutating func close(_ bracket: UInt8, empty: Bool) {
        if indentWidth > 0, !empty {
            depth -= 1
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * indentWidth))
        }
        output.append(bracket)
    }

    private mutating func writeNumber(_ number: Double) {
        // JSON has no NaN/Infinity; `null` is what JavaScript's JSON.stringify writes too.
        guard number.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if number.rounded(.towardZero) == number, abs(number) <= 9_007_199_254_740_992 {
            output.append(contentsOf: String(Int64(number)).utf8)
        } else {
            // Swift's description is the shortest round-tripping form and valid JSON ("1e-07", "0.1").
            output.append(contentsOf: number.description.utf8)
        }
    }
}

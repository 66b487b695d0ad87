/// Deterministic JSON serialization (sorted keys) for `JSONValue`: compact, or indented for
/// people to read. Its strings (`JSONEscaping`) and integers (`appendInteger`) are the ones
/// `JSONObjectWriter` writes too: one escaping and one number format everywhere.
struct JSONWriter {
    private(set) var output: [UInt8] = []
    /// Spaces per nesting level; 0 writes compact JSON (the wire form).
    let indentWidth: Int
    private var depth = 0

    init(indentWidth: Int = 0) {
        self.indentWidth = max(0, indentWidth)
    }

    /// Compact, appending to `output` (a value inside `JSONObjectWriter`'s object).
    init(continuing output: consuming [UInt8]) {
        self.output = output
        indentWidth = 0
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

    /// `value` in decimal, digit by digit into `output` (no `String` made for it).
    static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for Int64's 19 digits, written from the end
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = buffer.count
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: buffer[index...])
        }
    }

    private mutating func writeNumber(_ number: Double) {
        // JSON has no NaN/Infinity; `null` is what JavaScript's JSON.stringify writes too.
        guard number.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if number.rounded(.towardZero) == number, abs(number) <= 9_007_199_254_740_992 {
            Self.appendInteger(Int64(number), to: &output)
        } else {
            // Swift's description is the shortest round-tripping form and valid JSON ("1e-07", "0.1").
            output.append(contentsOf: number.description.utf8)
        }
    }
}

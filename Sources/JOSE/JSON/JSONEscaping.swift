/// How a string is written as a JSON string: quoted, with control characters, quotes and
/// backslashes escaped. Herald's JSON writers (`JSONWriter`, the log's lines) write every
/// string through here, and nearly every string needs no escape.
public enum JSONEscaping {
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Whether `string` needs no escape. The scan runs over the string's contiguous UTF-8 bytes:
    /// walking `String.UTF8View` index by index cost ~1.5 % of a login's CPU (perf), most of it
    /// the view's per-byte index checks.
    private static func isPlain(_ string: String) -> Bool {
        var string = string  // withUTF8 is mutating: it makes a bridged string native first
        return string.withUTF8 { bytes in
            !bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
    }

    /// Appends `string` to `output` as a quoted JSON string.
    public static func appendQuoted(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // One scan, then a bulk copy, for the strings that need no escape.
        guard !isPlain(string) else {
            output.append(contentsOf: string.utf8)
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x00..<0x20:
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                           hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

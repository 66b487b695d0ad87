/// Which strings JSON can carry between quotes as they are: no control character, quote or
/// backslash. Herald's JSON writers (JSONWriter, the log's lines) ask this of nearly every
/// string they write, and nearly every string passes.
public enum JSONEscaping {
    /// Whether `string` needs no escape. The scan runs over the string's contiguous UTF-8 bytes:
    /// walking `String.UTF8View` index by index cost ~1.5 % of a login's CPU (perf), most of it
    /// the view's per-byte index checks.
    public static func isPlain(_ string: String) -> Bool {
        var string = string  // withUTF8 is mutating: it makes a bridged string native first
        return string.withUTF8 { bytes in
            !bytes.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
    }
}

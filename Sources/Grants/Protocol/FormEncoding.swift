/// `application/x-www-form-urlencoded` decoding (form bodies, Basic credentials per RFC 6749
/// §2.3.1): `+` is a space, `%XX` a byte; the result must be UTF-8.
public enum FormEncoding {
    /// The name/value pairs of a form body in order; nil when an escape or the UTF-8 is bad.
    public static func decodePairs(_ bytes: [UInt8]) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for field in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let parts = field.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(Array(parts[0])) else { return nil }
            let value = parts.count > 1 ? decode(Array(parts[1])) : ""
            guard let value else { return nil }
            pairs.append((name, value))
        }
        return pairs
    }

    /// One form-encoded component; nil on a bad escape or invalid UTF-8.
    public static func decode(_ bytes: [UInt8]) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                output.append(0x20)
            } else if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = hex(bytes[index + 1]), let low = hex(bytes[index + 2]) else {
                    return nil
                }
                output.append(high << 4 | low)
                index += 2
            } else {
                output.append(byte)
            }
            index += 1
        }
        return String(validating: output, as: UTF8.self)
    }

    /// One form-encoded component of a string.
    public static func decode(_ text: String) -> String? { decode(Array(text.utf8)) }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
}

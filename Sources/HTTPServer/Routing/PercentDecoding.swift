/// Strict percent-decoding of one path segment (RFC 3986): every "%" must start a valid
/// escape and the result must be UTF-8 without control characters, else the segment is
/// unreadable. "+" is a literal plus in paths.
enum PercentDecoding {
    static func decodeSegment(_ segment: Substring) -> String? {
        let utf8 = segment.utf8
        guard utf8.contains(UInt8(ascii: "%")) else {
            return utf8.allSatisfy(isAllowedDecodedByte) ? String(segment) : nil
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first != utf8.endIndex else { return nil }
                let second = utf8.index(after: first)
                guard second != utf8.endIndex, let high = hexValue(utf8[first]), let low = hexValue(utf8[second]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
                index = utf8.index(after: second)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        guard bytes.allSatisfy(isAllowedDecodedByte) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// NUL and other control bytes never belong in a path parameter.
    private static func isAllowedDecodedByte(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte != 0x7F
    }
}

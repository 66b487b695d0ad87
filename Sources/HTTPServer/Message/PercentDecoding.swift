/// Percent-decoding (RFC 3986 §2.1), the one implementation behind path parameters, query
/// strings and form bodies (`FormDecoding`); they differ only in what `+` means and in how a
/// malformed escape is treated.
enum PercentDecoding {
    /// What a decoder does with a `%` that does not start two hex digits.
    enum MalformedEscape {
        /// The whole input is unreadable.
        case refuse
        /// The `%` is kept as a literal character (browsers' query parsing).
        case keepLiterally
    }

    /// The bytes `encoded` stands for; `+` is a space when `plusIsSpace` (form encoding), a
    /// plus otherwise (paths). nil for a malformed escape when `malformed` is `.refuse`.
    static func bytes(_ encoded: some Collection<UInt8>, plusIsSpace: Bool, malformed: MalformedEscape) -> [UInt8]? {
        let input = Array(encoded)
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%") {
                if index + 2 < input.count, let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2]) {
                    output.append(high << 4 | low)
                    index += 3
                    continue
                }
                guard malformed == .keepLiterally else { return nil }
                output.append(byte)
            } else if plusIsSpace, byte == UInt8(ascii: "+") {
                output.append(UInt8(ascii: " "))
            } else {
                output.append(byte)
            }
            index += 1
        }
        return output
    }

    /// Strict percent-decoding of one path segment: every "%" must start a valid escape and
    /// the result must be UTF-8 without control characters, else the segment is unreadable.
    /// "+" is a literal plus in paths.
    static func decodeSegment(_ segment: Substring) -> String? {
        let utf8 = segment.utf8
        guard utf8.contains(UInt8(ascii: "%")) else {
            return utf8.allSatisfy(isAllowedDecodedByte) ? String(segment) : nil
        }
        guard let bytes = bytes(utf8, plusIsSpace: false, malformed: .refuse), bytes.allSatisfy(isAllowedDecodedByte)
        else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The value of one hex digit (either case), or nil.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
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

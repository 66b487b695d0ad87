/// Base64url without padding (RFC 4648 §5, RFC 7515 §2), decoded strictly: no padding, no
/// whitespace, alphabet only, and unused trailing bits must be zero, so every byte string has
/// exactly one accepted encoding (a token cannot be altered without changing its bytes).
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0xFF marks bytes outside the alphabet.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }()

    /// Encodes bytes as unpadded base64url.
    public static func encode<B: Sequence>(_ bytes: B) -> String where B.Element == UInt8 {
        if let encoded = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0) }) {
            return encoded
        }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0) }
    }

    /// Decodes strict unpadded base64url; nil for anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode(buffer: $0) }) {
            return decoded
        }
        return Array(text.utf8).withUnsafeBufferPointer { decode(buffer: $0) }
    }

    static func encode(buffer input: UnsafeBufferPointer<UInt8>) -> String {
        let count = input.count
        let outputCount = (count / 3) * 4 + [0, 2, 3][count % 3]
        if outputCount == 0 { return "" }
        return alphabet.withUnsafeBufferPointer { symbols in
            String(unsafeUninitializedCapacity: outputCount) { output in
                var inIndex = 0
                var outIndex = 0
                while inIndex + 3 <= count {
                    let chunk = UInt32(input[inIndex]) << 16 | UInt32(input[inIndex + 1]) << 8 | UInt32(input[inIndex + 2])
                    output[outIndex] = symbols[Int(chunk >> 18 & 0x3F)]
                    output[outIndex + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                    output[outIndex + 2] = symbols[Int(chunk >> 6 & 0x3F)]
                    output[outIndex + 3] = symbols[Int(chunk & 0x3F)]
                    inIndex += 3
                    outIndex += 4
                }
                switch count - inIndex {
                case 1:
                    let chunk = UInt32(input[inIndex]) << 16
                    output[outIndex] = symbols[Int(chunk >> 18 & 0x3F)]
                    output[outIndex + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                case 2:
                    let chunk = UInt32(input[inIndex]) << 16 | UInt32(input[inIndex + 1]) << 8
                    output[outIndex] = symbols[Int(chunk >> 18 & 0x3F)]
                    output[outIndex + 1] = symbols[Int(chunk >> 12 & 0x3F)]
                    output[outIndex + 2] = symbols[Int(chunk >> 6 & 0x3F)]
                default:
                    break
                }
                return outputCount
            }
        }
    }

    static func decode(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        let remainder = count % 4
        // One leftover symbol carries only 6 bits: never a whole byte.
        if remainder == 1 { return nil }
        let outputCount = (count / 4) * 3 + (remainder == 0 ? 0 : remainder - 1)
        if outputCount == 0 { return [] }
        return decodeTable.withUnsafeBufferPointer { table -> [UInt8]? in
            var failed = false
            let output = [UInt8](unsafeUninitializedCapacity: outputCount) { output, initialized in
                var inIndex = 0
                var outIndex = 0
                // OR of every looked-up value: any 0xFF marks a non-alphabet byte; checked once at the end.
                var invalid: UInt8 = 0
                while inIndex + 4 <= count {
                    let a = table[Int(input[inIndex])], b = table[Int(input[inIndex + 1])]
                    let c = table[Int(input[inIndex + 2])], d = table[Int(input[inIndex + 3])]
                    invalid |= (a | b | c | d) & 0xC0
                    let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    output[outIndex] = UInt8(truncatingIfNeeded: chunk >> 16)
                    output[outIndex + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    output[outIndex + 2] = UInt8(truncatingIfNeeded: chunk)
                    inIndex += 4
                    outIndex += 3
                }
                switch remainder {
                case 2:
                    let a = table[Int(input[inIndex])], b = table[Int(input[inIndex + 1])]
                    invalid |= (a | b) & 0xC0
                    // Non-canonical: the 4 unused low bits of the last symbol must be zero.
                    if b & 0x0F != 0 { invalid |= 0x80 }
                    output[outIndex] = UInt8(truncatingIfNeeded: (UInt32(a) << 2) | (UInt32(b) >> 4))
                case 3:
                    let a = table[Int(input[inIndex])], b = table[Int(input[inIndex + 1])], c = table[Int(input[inIndex + 2])]
                    invalid |= (a | b | c) & 0xC0
                    // Non-canonical: the 2 unused low bits of the last symbol must be zero.
                    if c & 0x03 != 0 { invalid |= 0x80 }
                    let chunk = UInt32(a) << 10 | UInt32(b) << 4 | UInt32(c) >> 2
                    output[outIndex] = UInt8(truncatingIfNeeded: chunk >> 8)
                    output[outIndex + 1] = UInt8(truncatingIfNeeded: chunk)
                default:
                    break
                }
                initialized = outputCount
                failed = invalid != 0
            }
            return failed ? nil : output
        }
    }
}

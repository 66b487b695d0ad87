import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL.
public enum SHA256 {
    /// The digest length in bytes.
    public static let byteCount = 32

    /// The 32-byte SHA-256 digest of `data`.
    public static func hash<B: Sequence>(_ data: B) -> [UInt8] where B.Element == UInt8 {
        if let digest = data.withContiguousStorageIfAvailable({ hash(buffer: UnsafeRawBufferPointer($0)) }) {
            return digest
        }
        return Array(data).withUnsafeBytes { hash(buffer: $0) }
    }

    /// The SHA-256 digest of the UTF-8 bytes of `string`.
    public static func hash(_ string: String) -> [UInt8] {
        var string = string
        return string.withUTF8 { hash(buffer: UnsafeRawBufferPointer($0)) }
    }

    /// Lowercase hex of the SHA-256 of the UTF-8 bytes of `string` (Apple's nonce claim format).
    public static func hexDigest(_ string: String) -> String {
        Hex.encode(hash(string))
    }

    static func hash(buffer: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { output, initialized in
            var length: UInt32 = 0
            // EVP_Digest only fails on allocation failure or a broken provider; no caller could recover.
            guard EVP_Digest(buffer.baseAddress, buffer.count, output.baseAddress, &length, FetchedAlgorithms.sha256, nil) == 1,
                  length == UInt32(byteCount) else {
                fatalError("SHA-256 failed inside OpenSSL")
            }
            initialized = byteCount
        }
    }
}

/// Lowercase hexadecimal encoding and decoding.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode<B: Sequence>(_ bytes: B) -> String where B.Element == UInt8 {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            output.append(digits[Int(byte >> 4)])
            output.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Bytes of an even-length hex string (either case); nil for anything else.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            output.append(high << 4 | low)
            index += 2
        }
        return output
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

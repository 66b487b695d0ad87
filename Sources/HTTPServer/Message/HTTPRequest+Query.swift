extension HTTPRequest {
    /// The query's name/value pairs in order, form-decoded ("+" is a space, "%XX" a byte).
    /// A pair without "=" has an empty value; empty pairs ("a=1&&b=2") are skipped.
    public func queryItems() -> [(name: String, value: String)] {
        guard let rawQuery, !rawQuery.isEmpty else { return [] }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (name: FormDecoding.decode(pair[..<equals]),
                        value: FormDecoding.decode(pair[pair.index(after: equals)...]))
            }
            return (name: FormDecoding.decode(pair), value: "")
        }
    }

    /// The first value of query parameter `name`, or nil.
    public func query(_ name: String) -> String? {
        queryItems().first { $0.name == name }?.value
    }
}

/// application/x-www-form-urlencoded decoding, lenient as browsers are: a malformed "%"
/// escape is kept literally and invalid UTF-8 becomes U+FFFD, so a query never fails to parse.
enum FormDecoding {
    static func decode(_ text: Substring) -> String {
        let utf8 = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                      let high = PercentDecoding.hexValue(utf8[index + 1]),
                      let low = PercentDecoding.hexValue(utf8[index + 2]) {
                bytes.append(high << 4 | low)
                index += 2
            } else {
                bytes.append(byte)
            }
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension HTTPRequest {
    /// The query's name/value pairs in order, form-decoded ("+" is a space, "%XX" a byte)
    /// leniently: a malformed escape is kept literally, invalid UTF-8 becomes U+FFFD.
    /// A pair without "=" has an empty value; empty pairs ("a=1&&b=2") are skipped.
    public func queryItems() -> [(name: String, value: String)] {
        guard let rawQuery, !rawQuery.isEmpty else { return [] }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (name: FormDecoding.decodeLeniently(pair[..<equals]),
                        value: FormDecoding.decodeLeniently(pair[pair.index(after: equals)...]))
            }
            return (name: FormDecoding.decodeLeniently(pair), value: "")
        }
    }

    /// The first value of query parameter `name`, or nil.
    public func query(_ name: String) -> String? {
        queryItems().first { $0.name == name }?.value
    }
}

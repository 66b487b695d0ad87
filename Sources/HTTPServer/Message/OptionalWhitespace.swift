extension StringProtocol {
    /// Without the leading and trailing optional whitespace of a header field (RFC 9110 §5.6.3:
    /// spaces and horizontal tabs only). A byte scan: Foundation's `trimmingCharacters(in:)`
    /// bridges through NSString and was most of a JSON body's Content-Type check.
    public var trimmingOptionalWhitespace: SubSequence {
        func isWhitespace(_ character: Character) -> Bool { character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isWhitespace($0) }) else { return self[endIndex...] }
        let last = lastIndex(where: { !isWhitespace($0) })!
        return self[first...last]
    }
}

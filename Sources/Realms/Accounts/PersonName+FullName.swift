import Foundation

extension PersonName {
    /// A name an app sent as one string (Sign in with Apple's formatted `fullName`), split the
    /// way Apple's own formatting joins it: at the last whitespace, given name before it and
    /// family name after it ("Jane Q Public" → "Jane Q" + "Public"). A name without whitespace
    /// (e.g. Chinese "张三") is the given name whole with no family name, because guessing a
    /// split there would be wrong more often than right. The trimmed string is kept as the
    /// display name, so nothing the person typed is lost to the split. Blank → no name.
    public init(fullName: String) {
        let display = fullName.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !display.isEmpty else {
            self.init()
            return
        }
        // `display` is trimmed, so whitespace found is inside it, with text on both sides.
        guard let separator = display.lastIndex(where: \.isWhitespace) else {
            self.init(givenName: display, familyName: nil, displayName: display)
            return
        }
        let given = display[..<separator].trimmingCharacters(in: .whitespacesAndNewlines)
        let family = String(display[display.index(after: separator)...])
        self.init(givenName: given, familyName: family, displayName: display)
    }
}

import Foundation

/// Reads the freshness lifetime from a `Cache-Control` response header.
enum CacheControlMaxAge {
    /// `max-age` in seconds; 0 for `no-cache`/`no-store` (the caller's floor then applies);
    /// nil when the header says nothing about freshness.
    static func seconds(from header: String?) -> Int? {
        guard let header else { return nil }
        var result: Int?
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1)
            let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
            switch name {
            case "no-cache", "no-store":
                return 0
            case "max-age" where parts.count == 2:
                var value = parts[1].trimmingCharacters(in: .whitespaces)
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
                // Digits only; an absurdly long number saturates instead of failing.
                guard !value.isEmpty, value.allSatisfy(\.isASCIIDigitCharacter) else { continue }
                result = Int(value) ?? Int.max
            default:
                continue
            }
        }
        return result
    }
}

private extension Character {
    var isASCIIDigitCharacter: Bool { ("0"..."9").contains(self) }
}

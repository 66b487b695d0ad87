import Foundation

/// Reads the freshness lifetime from a `Cache-Control` response header.
package enum CacheControlMaxAge {
    /// `max-age` in seconds; 0 for `no-cache`/`no-store` (the caller's floor then applies);
    /// nil when the header says nothing about freshness.
    package static func seconds(from header: String?) -> Int? {
        guard let header else { return nil }
        var result: Int?
        for directive in header.split(separator: ",") {
            // Not split(separator:): it drops empty pieces, so a bare "=" directive would give no
            // name at all (and indexing it trapped).
            let parts = directive.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let first = parts.first else { continue }
            let name = first.trimmingCharacters(in: .whitespaces).lowercased()
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
    /// One of "0"…"9" exactly; a range of Characters would also admit "0" plus a combining mark.
    var isASCIIDigitCharacter: Bool { isASCII && ("0"..."9").contains(self) }
}

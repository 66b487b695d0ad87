import Foundation

/// The shape rules for operator input, shared by realms, providers, clients and accounts.
/// Each check answers the reason an input is refused, or nil when it is acceptable; reasons
/// never echo the value (it may be a secret pasted into the wrong field).
public enum InputRules {
    /// Longest free text (display names, client names).
    public static let maxNameLength = 200
    /// Longest URL (login URL, redirect URI).
    public static let maxURLLength = 2048
    /// Longest `X-Change-Reason`.
    public static let maxReasonLength = 500

    /// `^[a-z0-9][a-z0-9-]{0,62}$` — realm ids.
    public static func isSlug(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...63).contains(bytes.count) else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            isLowerAlnum(byte) || (index > 0 && byte == UInt8(ascii: "-"))
        }
    }

    /// Why a realm id is refused, or nil.
    public static func realmIDProblem(_ text: String) -> String? {
        isSlug(text) ? nil : "must match ^[a-z0-9][a-z0-9-]{0,62}$"
    }

    /// Why free text (a name) is refused: empty, too long, or holding control characters.
    public static func textProblem(_ text: String, maxLength: Int = maxNameLength) -> String? {
        if text.trimmingCharacters(in: .whitespaces).isEmpty { return "must not be empty" }
        if text.count > maxLength { return "must be at most \(maxLength) characters" }
        if hasControlCharacters(text) { return "must not contain control characters" }
        return nil
    }

    /// Why a client id is refused: 1–128 of `A-Z a-z 0-9 . _ ~ -` (safe in URLs and forms).
    public static func clientIDProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...128).contains(bytes.count) else { return "must be 1 to 128 characters" }
        let ok = bytes.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
            || $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "-") }
        return ok ? nil : "may contain only letters, digits, '.', '_', '~' and '-'"
    }

    /// Why an admin token name is refused: 1–64 of `A-Z a-z 0-9 . _ -`.
    public static func tokenNameProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count) else { return "must be 1 to 64 characters" }
        let ok = bytes.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
            || $0 == UInt8(ascii: "-") }
        return ok ? nil : "may contain only letters, digits, '.', '_' and '-'"
    }

    /// Why an Apple Services ID or Bundle ID is refused. Identifiers are exact, case-sensitive
    /// strings: letters, digits, '.' and '-', no wildcards.
    public static func appleIdentifierProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...255).contains(bytes.count) else { return "must be 1 to 255 characters" }
        if text.contains("*") { return "wildcards are not allowed" }
        let ok = bytes.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") }
        return ok ? nil : "may contain only letters, digits, '.' and '-'"
    }

    /// Why an Apple Team ID or Key ID is refused: exactly 10 of `A-Z 0-9`.
    public static func appleTenCharacterIDProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        let ok = bytes.count == 10 && bytes.allSatisfy {
            ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
        }
        return ok ? nil : "must be 10 characters of A-Z and 0-9"
    }

    /// Why a Google OAuth client id is refused. Web, Android and iOS ids all look like
    /// `<digits>-<chars>.apps.googleusercontent.com`, but Google promises no grammar, so any
    /// 1–255 bytes of printable ASCII without spaces are taken; matching is exact.
    public static func googleClientIDProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...255).contains(bytes.count) else { return "must be 1 to 255 characters" }
        return bytes.allSatisfy({ (0x21...0x7E).contains($0) }) ? nil : "must be printable ASCII without spaces"
    }

    /// Why a DNS domain name (a Google Workspace hosted domain) is refused: lower-case labels of
    /// `a-z 0-9 -` (1–63 bytes, no '-' at either end), at least two of them, at most 253 bytes.
    /// Lower-case only, so it compares with Google's `hd` claim as stored, with no folding.
    public static func domainNameProblem(_ text: String) -> String? {
        guard (1...253).contains(text.utf8.count) else { return "must be 1 to 253 characters" }
        if text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) { return "must be lower-case" }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        let ok = labels.count >= 2 && labels.allSatisfy { label in
            let bytes = Array(label.utf8)
            return (1...63).contains(bytes.count) && bytes.first != UInt8(ascii: "-") && bytes.last != UInt8(ascii: "-")
                && bytes.allSatisfy { isLowerAlnum($0) || $0 == UInt8(ascii: "-") }
        }
        return ok ? nil : "must be a domain name such as example.com"
    }

    /// Why an OAuth scope token (RFC 6749 §3.3) is refused; at most 64 characters.
    public static func scopeProblem(_ text: String) -> String? {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count) else { return "must be 1 to 64 characters" }
        // scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
        let ok = bytes.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
        return ok ? nil : "is not a valid scope token"
    }

    /// Why an email address is refused. Deliberately loose (one '@', both sides present, no
    /// spaces): providers vouch for addresses, Herald only refuses what cannot be one.
    public static func emailProblem(_ text: String) -> String? {
        guard (3...254).contains(text.utf8.count) else { return "must be 3 to 254 characters" }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return "is not an email address" }
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) {
            return "is not an email address"
        }
        return nil
    }

    /// Why a realm login URL is refused: absolute https (or http on loopback), no fragment.
    public static func loginURLProblem(_ text: String) -> String? {
        if let problem = urlTextProblem(text) { return problem }
        guard let scheme = scheme(of: text), scheme == "https" || scheme == "http" else {
            return "must be an absolute https URL"
        }
        return webURLProblem(text, scheme: scheme)
    }

    /// Why a client redirect URI is refused (RFC 8252 + OAuth 2.1): absolute; https, http only
    /// on loopback (127.0.0.1, localhost, [::1]), or a private-use scheme with a dot
    /// (`com.example.app:/cb`); never a fragment. Matching later is by exact string.
    public static func redirectURIProblem(_ text: String) -> String? {
        if let problem = urlTextProblem(text) { return problem }
        guard let scheme = scheme(of: text) else { return "must be an absolute URI" }
        if scheme == "https" || scheme == "http" { return webURLProblem(text, scheme: scheme) }
        // Private-use schemes must be reverse-domain names (RFC 8252 §7.1); that also keeps
        // out javascript:, data:, file: and friends.
        guard scheme.contains("."), !scheme.hasPrefix("."), !scheme.hasSuffix(".") else {
            return "must use https, http on loopback, or a reverse-domain custom scheme"
        }
        let rest = text.dropFirst(scheme.count + 1)
        return rest.isEmpty ? "must have a path after the scheme" : nil
    }

    /// Why a profile photo URL (a provider's `picture`) is not kept: it must be an absolute
    /// `https` URL with a host, at most 2,048 bytes, with no whitespace, control or non-ASCII
    /// characters, credentials or fragment. Consoles and apps later show it as an image, so
    /// only https: never `http` (mixed content, the photo and its viewer in clear), nor
    /// `javascript:`, `data:` or a relative path a page would resolve against itself.
    public static func pictureURLProblem(_ text: String) -> String? {
        if let problem = urlTextProblem(text) { return problem }
        guard scheme(of: text) == "https" else { return "must be an absolute https URL" }
        return webURLProblem(text, scheme: "https")
    }

    /// Why a change reason (`X-Change-Reason`) is refused.
    public static func reasonProblem(_ text: String) -> String? {
        if text.count > maxReasonLength { return "must be at most \(maxReasonLength) characters" }
        if hasControlCharacters(text) { return "must not contain control characters" }
        return nil
    }

    // MARK: - Pieces

    static func urlTextProblem(_ text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        if text.utf8.count > maxURLLength { return "must be at most \(maxURLLength) characters" }
        if text.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value >= 0x7F }) {
            return "must not contain spaces, control or non-ASCII characters"
        }
        if text.contains("#") { return "must not contain a fragment" }
        return nil
    }

    /// The lowercased scheme (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )), or nil.
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.utf8.first, isAlpha(first) else { return nil }
        let ok = scheme.utf8.allSatisfy { isAlnum($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-")
            || $0 == UInt8(ascii: ".") }
        return ok ? scheme.lowercased() : nil
    }

    static func webURLProblem(_ text: String, scheme: String) -> String? {
        guard let components = URLComponents(string: text), let rawHost = components.host, !rawHost.isEmpty,
              text.lowercased().hasPrefix(scheme + "://")
        else { return "must be an absolute URL with a host" }
        if components.user != nil || components.password != nil { return "must not contain credentials" }
        if scheme == "http" {
            let host = rawHost.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard ["127.0.0.1", "localhost", "::1"].contains(host) else {
                return "http is allowed only for loopback hosts (127.0.0.1, localhost, [::1])"
            }
        }
        return nil
    }

    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }

    static func isLowerAlnum(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }

    static func isAlpha(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
    }

    static func isAlnum(_ byte: UInt8) -> Bool {
        isAlpha(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
    }
}

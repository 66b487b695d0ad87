import HTTPServer
import JOSE

/// The cookie that binds a web sign-in's `state` to the browser that started it, against login
/// CSRF: without it, an attacker could start a flow, keep Apple's answer (state and code)
/// unsubmitted, and make a victim's browser deliver it, signing the victim in as the attacker.
/// `/apple/login` sets it (or renews the one the browser already has, so two tabs can sign in
/// at once) and stores only its SHA-256 with the state; the callback takes the state only when
/// the cookie it receives hashes to that value.
///
/// - `__Host-` prefix: Secure, `Path=/`, no `Domain`, so no sibling host can set or overwrite it.
/// - `SameSite=None`: Apple's `form_post` is a cross-site POST from appleid.apple.com, and a
///   browser sends neither `Lax` nor `Strict` cookies with it; the binding itself, not
///   SameSite, is what stops the cross-site delivery of someone else's state.
/// - `HttpOnly`: no script needs it; `Max-Age` is the state's lifetime.
enum AppleWebBrowserCookie {
    static let name = "__Host-herald-apple-web"
    /// 256 random bits, base64url without padding.
    static let valueLength = 43

    /// The binding the request's browser already holds, if it sent a well-formed one.
    static func binding(in request: HTTPRequest) -> String? {
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " || $0 == "\t" }
                guard trimmed.hasPrefix(name + "=") else { continue }
                let value = trimmed.dropFirst(name.count + 1)
                if isWellFormed(value) { return String(value) }
            }
        }
        return nil
    }

    /// A new binding for a browser that has none.
    static func newBinding() -> String {
        SecureRandom.token(byteCount: 32)
    }

    /// The `Set-Cookie` value that (re)sets `binding` for `maxAgeSeconds`.
    static func setCookie(_ binding: String, maxAgeSeconds: Int64) -> String {
        "\(name)=\(binding); Path=/; Max-Age=\(maxAgeSeconds); Secure; HttpOnly; SameSite=None"
    }

    private static func isWellFormed(_ value: Substring) -> Bool {
        value.utf8.count == valueLength && value.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }
}

import HTTPServer
import JOSE

/// The cookie that binds a web sign-in's state to the browser that started it, against login
/// CSRF: without it, an attacker could start a sign-in, keep the provider's answer unsubmitted,
/// and make a victim's browser deliver it, signing the victim in as the attacker. The start
/// route sets it (or renews the one the browser already has, so two tabs can sign in at once)
/// and `WebSignInStates` stores only its SHA-256 with the state; the answer is taken only when
/// the cookie it arrives with hashes to that value. One cookie per provider.
///
/// - `__Host-` prefix: Secure, `Path=/`, no `Domain`, so no sibling host can set or overwrite it.
/// - `SameSite=None`: Apple's `form_post` is a cross-site POST from appleid.apple.com, and a
///   browser sends neither `Lax` nor `Strict` cookies with it; the binding itself, not
///   SameSite, is what stops the cross-site delivery of someone else's state.
/// - `HttpOnly`: no script needs it; `Max-Age` is the state's lifetime.
struct WebSignInCookie: Sendable {
    let name: String

    static let apple = WebSignInCookie(name: "__Host-herald-apple-web")
    static let google = WebSignInCookie(name: "__Host-herald-google-web")

    /// 256 random bits, base64url without padding.
    static let valueLength = 43

    /// The binding the request's browser already holds, if it sent a well-formed one.
    func binding(in request: HTTPRequest) -> String? {
        Self.values(named: name, in: request).first { Self.isWellFormed($0) }
    }

    /// A new binding for a browser that has none.
    static func newBinding() -> String {
        SecureRandom.token(byteCount: 32)
    }

    /// The `Set-Cookie` value that (re)sets `binding` for `maxAgeSeconds`.
    func setCookie(_ binding: String, maxAgeSeconds: Int64) -> String {
        "\(name)=\(binding); Path=/; Max-Age=\(maxAgeSeconds); Secure; HttpOnly; SameSite=None"
    }

    /// Every value of the cookie `name` the request carries, in order.
    static func values(named name: String, in request: HTTPRequest) -> [String] {
        var found: [String] = []
        for header in request.headers.values("Cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.drop { $0 == " " || $0 == "\t" }
                guard trimmed.hasPrefix(name + "=") else { continue }
                found.append(String(trimmed.dropFirst(name.count + 1)))
            }
        }
        return found
    }

    private static func isWellFormed(_ value: String) -> Bool {
        value.utf8.count == valueLength && value.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
    }
}

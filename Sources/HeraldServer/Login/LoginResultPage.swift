import Foundation
import HTTPServer
import JOSE

/// The page a web sign-in (Apple's, Google's) ends on, for the app's WebView to read — not a 302 to a custom
/// scheme, which WebViews handle inconsistently and which loses the result when nothing
/// answers it. It carries:
/// - the result as JSON in `<script type="application/json" id="herald-login-result">` (data,
///   never executed; every `<` written as `\u003c` so no value can close the element);
/// - a button whose link the app intercepts: the third party's redirect URI with its code
///   (branch B), or the app's registered `returnTo` with the result in the fragment (branch A;
///   a fragment never reaches a server or a Referer);
/// - a table for humans, with tokens masked.
/// Served with a CSP that allows no script and only the page's own style (by hash), no
/// framing, no referrer, no caching.
struct LoginResultPage {
    let status: Int
    /// The JSON result (also the fragment of a branch-A deep link).
    let result: [String: JSONValue]
    /// Where the button goes, if anywhere.
    let link: String?
    let title: String

    static let style = "body{font-family:system-ui,sans-serif;margin:2em;max-width:40em}"
        + "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}"
        + "a.button{display:inline-block;margin-top:1em;padding:.6em 1.2em;background:#000;color:#fff;"
        + "text-decoration:none;border-radius:.4em}"
    static let styleHash = "sha256-" + Data(SHA256.hash(Array(style.utf8))).base64EncodedString()
    static let contentSecurityPolicy = "default-src 'none'; style-src '\(styleHash)'; base-uri 'none'; "
        + "form-action 'none'; frame-ancestors 'none'"

    var response: HTTPResponse {
        let json = String(decoding: JSONValue.object(result).serialized(), as: UTF8.self)
            .replacingOccurrences(of: "<", with: "\\u003c")
        var rows = ""
        for key in result.keys.sorted() {
            rows += "<tr><th>\(Self.escape(key))</th><td>\(Self.escape(Self.display(key, result[key] ?? .null)))</td></tr>"
        }
        var button = ""
        if let link {
            button = "<a class=\"button\" id=\"herald-continue\" href=\"\(Self.escape(link))\">Continue</a>"
        }
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>\(Self.escape(title))</title><style>\(Self.style)</style></head>
            <body><h1>\(Self.escape(title))</h1>
            <script type="application/json" id="herald-login-result">\(json)</script>
            <table>\(rows)</table>\(button)</body></html>
            """
        return HTTPResponse(status: status, headers: [
            "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
            "Content-Security-Policy": Self.contentSecurityPolicy, "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer",
        ], body: Array(html.utf8))
    }

    /// Tokens and codes shown by their first characters only.
    static func display(_ key: String, _ value: JSONValue) -> String {
        let text: String = switch value {
        case .string(let string): string
        case .object: "…"
        default: String(decoding: value.serialized(), as: UTF8.self)
        }
        let secret = key.lowercased().contains("token") || key == "redirectUri"
        return secret && text.count > 8 ? String(text.prefix(6)) + "…" : text
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}

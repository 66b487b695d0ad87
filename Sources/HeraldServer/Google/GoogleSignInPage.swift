import Foundation
import HTTPServer
import HeraldGoogle
import JOSE

/// The page that shows Google's sign-in button (Google Identity Services' HTML API) for one
/// web sign-in: the button posts Google's ID token straight back to Herald's `login_uri`
/// (redirect mode), with the nonce that names this sign-in signed into it. Herald serves the
/// page itself because Google's CSRF double-submit cookie (`g_csrf_token`) is set on the
/// page's origin, which must be the `login_uri`'s.
///
/// Its CSP allows Google's script and the `/gsi/` frames, requests and styles Google's
/// documentation lists, the page's own style by hash, and forms to itself only.
struct GoogleSignInPage {
    /// Google's own script, the default of `HERALD_GOOGLE_GSI_SCRIPT_URL`.
    static let defaultScriptURL = URL(string: "https://accounts.google.com/gsi/client")!

    /// Google's script (`HERALD_GOOGLE_GSI_SCRIPT_URL`).
    let scriptURL: URL
    /// Where the button posts: `{publicURL}/api/oauth/{realm}/google/callback`.
    let loginURI: String
    let button: GoogleWebLogin.Button

    static let style = "body{font-family:system-ui,sans-serif;margin:2em;max-width:40em}"
    static let styleHash = "sha256-" + Data(SHA256.hash(Array(style.utf8))).base64EncodedString()

    /// The Content-Security-Policy for a GIS script at `scriptURL`.
    static func contentSecurityPolicy(scriptURL: URL) -> String {
        let gsi = origin(of: scriptURL) + "/gsi/"
        return "default-src 'none'; script-src \(scriptURL.absoluteString); connect-src \(gsi); frame-src \(gsi); "
            + "style-src '\(styleHash)' \(gsi)style; img-src \(gsi) https://*.googleusercontent.com; "
            + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    }

    var response: HTTPResponse {
        let escape = LoginResultPage.escape
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
            <title>Sign in with Google</title><style>\(Self.style)</style>
            <script src="\(escape(scriptURL.absoluteString))" async></script></head>
            <body><h1>Sign in</h1>
            <div id="g_id_onload" data-client_id="\(escape(button.clientID))" data-login_uri="\(escape(loginURI))"
                 data-nonce="\(escape(button.nonce))" data-ux_mode="redirect" data-context="signin"
                 data-auto_prompt="false"></div>
            <div class="g_id_signin" data-type="standard" data-text="signin_with"></div>
            </body></html>
            """
        return HTTPResponse(status: 200, headers: [
            "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
            "Content-Security-Policy": Self.contentSecurityPolicy(scriptURL: scriptURL), "X-Frame-Options": "DENY",
            // Google's button checks the page's origin against the client's authorized origins.
            "Referrer-Policy": "strict-origin-when-cross-origin",
        ], body: Array(html.utf8))
    }

    private static func origin(of url: URL) -> String {
        var origin = "\(url.scheme ?? "https")://\(url.host ?? "")"
        if let port = url.port { origin += ":\(port)" }
        return origin
    }
}

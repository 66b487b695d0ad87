import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Sign in with Google in a browser, end to end against the real server: Herald's page with
/// Google's button, and the button's post (`credential`, `g_csrf_token`) back to the
/// `login_uri`. Google's script itself is faked in the browser stage (`Tests/Browser`).
@Suite("Google web sign-in")
struct GoogleWebSignInTests {
    static let returnTo = "https://app.example.com/google-done"

    /// One browser's start: the button's attributes, and the cookie binding the sign-in to it.
    struct Start {
        let page: String
        let cookie: String
        /// The value of the `data-<name>` attribute on the page.
        func attribute(_ name: String) -> String? {
            guard let start = page.range(of: "data-\(name)=\"") else { return nil }
            return String(page[start.upperBound...].prefix { $0 != "\"" })
        }
        var nonce: String { attribute("nonce") ?? "" }
    }

    static func with(_ body: (GoogleLoginFixture) async throws -> Void) async throws {
        try await GoogleLoginFixture.with(provider: [
            "enabled": true, "clientIds": [.string(GoogleLoginFixture.clientID), "android-client.apps.googleusercontent.com"],
        ]) { fixture in
            try expectStatus(200, await fixture.base.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                            json: ["redirectUris": [.string(returnTo)]]))
            try await body(fixture)
        }
    }

    static func start(_ fixture: GoogleLoginFixture, query: String = "clientId=ios-app&returnTo=\(RedirectURI.encode(returnTo))",
                      cookie: String? = nil) async throws -> Start {
        let response = try await fixture.base.send("GET", "/api/oauth/acme/google/login?\(query)",
                                                   headers: cookie.map { [("Cookie", $0)] } ?? [])
        try expectStatus(200, response)
        let setCookie = try #require(response.header("Set-Cookie"))
        return Start(page: response.text, cookie: String(setCookie.prefix { $0 != ";" }))
    }

    /// The button's post: `credential` and `g_csrf_token`, with Google's CSRF cookie (`csrfCookie`)
    /// and the browser's binding (`binding`).
    static func post(_ fixture: GoogleLoginFixture, credential: String, csrf: String = "csrf-1234",
                     csrfCookie: String? = "csrf-1234", binding: String?) async throws -> TestHTTPClient.Response {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        let cookies = [csrfCookie.map { "g_csrf_token=\($0)" }, binding].compactMap { $0 }
        if !cookies.isEmpty { headers.append(("Cookie", cookies.joined(separator: "; "))) }
        let form = [("credential", credential), ("g_csrf_token", csrf), ("select_by", "btn")]
        return try await fixture.base.herald.request(
            "POST", "/api/oauth/acme/google/callback", headers: headers,
            body: Array(form.map { "\($0.0)=\(RedirectURI.encode($0.1))" }.joined(separator: "&").utf8))
    }

    @Test("the page carries Google's button for the realm's web client, a fresh nonce and the login_uri; its CSP allows Google's script only")
    func page() async throws {
        try await Self.with { fixture in
            let response = try await fixture.base.send("GET", "/api/oauth/acme/google/login?clientId=ios-app")
            try expectStatus(200, response)
            let start = Start(page: response.text, cookie: "")
            #expect(start.attribute("client_id") == GoogleLoginFixture.clientID)
            let publicURL = fixture.base.herald.application.services.configuration.publicURL
            #expect(start.attribute("login_uri") == "\(publicURL)/api/oauth/acme/google/callback")
            #expect(start.nonce.count == 43)
            #expect(response.text.contains(#"<script src="https://accounts.google.com/gsi/client" async></script>"#))
            let csp = try #require(response.header("Content-Security-Policy"))
            #expect(csp.contains("script-src https://accounts.google.com/gsi/client;"))
            #expect(csp.contains("form-action 'self'"))
            #expect(!csp.contains("unsafe-inline"))
            #expect(response.header("Set-Cookie")?.hasPrefix("__Host-herald-google-web=") == true)
            #expect(response.header("Cache-Control") == "no-store")
        }
    }

    @Test("the button's post signs the browser in: the result page carries the tokens and the returnTo link; door web is recorded")
    func signIn() async throws {
        try await Self.with { fixture in
            let start = try await Self.start(fixture)
            let response = try await Self.post(fixture, credential: fixture.token(nonce: start.nonce), binding: start.cookie)
            try expectStatus(200, response)
            let result = try AppleWebFlowTests.result(response)
            #expect(result["status"] == "success")
            #expect(result["isNewUser"] == true)
            #expect(result["user"]?.objectValue?["email"] == "ada@example.com")
            #expect(response.text.contains("href=\"\(Self.returnTo)#herald-login-result="))
            let metrics = try await fixture.base.send("GET", "/metrics").text
            #expect(metrics.contains(#"herald_logins_total{provider="google",door="web",outcome="success",reason="created"} 1"#))
            // Used once: the same post again finds no sign-in.
            let again = try await Self.post(fixture, credential: fixture.token(nonce: start.nonce), binding: start.cookie)
            #expect(try AppleWebFlowTests.result(again)["code"] == "invalid_state")
        }
    }

    @Test("a post whose g_csrf_token does not match Google's cookie, or has none, is refused and leaves the sign-in usable")
    func doubleSubmitCookie() async throws {
        try await Self.with { fixture in
            let start = try await Self.start(fixture)
            let token = fixture.token(nonce: start.nonce)
            for (csrf, cookie) in [("csrf-1234", "csrf-9999"), ("csrf-1234", nil), ("", ""), ("", nil)] as [(String, String?)] {
                let refused = try await Self.post(fixture, credential: token, csrf: csrf, csrfCookie: cookie,
                                                  binding: start.cookie)
                #expect(refused.status == 400)
                #expect(try AppleWebFlowTests.result(refused)["code"] == "invalid_csrf_token")
            }
            try expectStatus(200, try await Self.post(fixture, credential: token, binding: start.cookie))
        }
    }

    @Test("login CSRF: a token for one browser's sign-in, delivered to another browser (or without the cookie), signs no one in")
    func boundToTheBrowser() async throws {
        try await Self.with { fixture in
            let attacker = try await Self.start(fixture)
            let victim = try await Self.start(fixture)
            #expect(attacker.cookie != victim.cookie)
            let attackersToken = fixture.token(subject: "attacker", nonce: attacker.nonce)
            let delivered = try await Self.post(fixture, credential: attackersToken, binding: victim.cookie)
            #expect(try AppleWebFlowTests.result(delivered)["code"] == "invalid_state")
            let noCookie = try await Self.post(fixture, credential: attackersToken, binding: nil)
            #expect(try AppleWebFlowTests.result(noCookie)["code"] == "invalid_state")
            // A nonce no sign-in was started for (a token minted elsewhere).
            let stray = try await Self.post(fixture, credential: fixture.token(nonce: "not-a-state"), binding: victim.cookie)
            #expect(try AppleWebFlowTests.result(stray)["code"] == "invalid_state")
            let accounts = try await fixture.base.admin("GET", "/api/admin/realms/acme/accounts")
            #expect(accounts.json["items"]?.arrayValue?.isEmpty == true)
            // Each browser's own sign-in still works.
            try expectStatus(200, try await Self.post(fixture, credential: attackersToken, binding: attacker.cookie))
        }
    }

    @Test("a refused token ends on the error page in the envelope's words, counted as a web rejection")
    func refusedToken() async throws {
        try await Self.with { fixture in
            let start = try await Self.start(fixture)
            let token = fixture.token(nonce: start.nonce) { $0.claims["aud"] = "other.apps.googleusercontent.com"; $0.claims["azp"] = nil }
            let response = try await Self.post(fixture, credential: token, binding: start.cookie)
            #expect(response.status == 401)
            let result = try AppleWebFlowTests.result(response)
            #expect(result["code"] == "invalid_google_token")
            #expect(result["details"]?.objectValue?["reason"] == "audience")
            let metrics = try await fixture.base.send("GET", "/metrics").text
            #expect(metrics.contains(#"herald_logins_total{provider="google",door="web",outcome="rejected",reason="audience"} 1"#))
        }
    }

    @Test("branch B: a sign-in started with downstreamState ends on the partner's redirect with a code")
    func thirdParty() async throws {
        try await Self.with { fixture in
            let handle = try await NativeLoginBranchBTests.authorize(fixture.base, state: "partner-state")
            let start = try await Self.start(fixture, query: "clientId=partner&downstreamState=\(RedirectURI.encode(handle))")
            let response = try await Self.post(fixture, credential: fixture.token(nonce: start.nonce), binding: start.cookie)
            try expectStatus(200, response)
            let redirect = try #require(AppleWebFlowTests.result(response)["redirectUri"]?.stringValue)
            #expect(redirect.hasPrefix("https://partner.example/callback?code=ac_"))
            #expect(queryParameters(redirect)["state"] == "partner-state")
        }
    }

    @Test("the start is checked like Apple's: provider, client, branch, returnTo and pending state")
    func startChecks() async throws {
        try await Self.with { fixture in
            func start(_ query: String) async throws -> TestHTTPClient.Response {
                try await fixture.base.send("GET", "/api/oauth/acme/google/login?\(query)")
            }
            #expect(try await start("clientId=partner").code == "client_not_allowed")
            #expect(try await start("clientId=nobody").status == 400)
            #expect(try await start("clientId=ios-app&returnTo=https://evil.example/").status == 400)
            #expect(try await start("clientId=partner&downstreamState=never-issued").status == 400)
            #expect(try await start("clientId=ios-app&clientId=ios-app").status == 400)
            #expect(try await fixture.base.send("GET", "/api/oauth/nowhere/google/login?clientId=ios-app").status == 404)
            try expectStatus(204, await fixture.base.admin("DELETE", "/api/admin/realms/acme/providers/google"))
            #expect(try await start("clientId=ios-app").code == "provider_not_configured")
        }
    }
}

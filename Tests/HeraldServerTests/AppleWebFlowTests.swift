import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import HeraldServer

/// Sign in with Apple in a browser, end to end against the real server: Herald's redirect to
/// (fake) Apple, Apple's form_post back, the code exchange with a checked client secret, and
/// the result page. The browser itself is driven in `Tests/Browser`.
@Suite("Apple web sign-in")
struct AppleWebFlowTests {
    static let servicesID = "com.example.herald.web"
    static let returnTo = "https://app.example.com/apple-done"

    static func with(clock: TestClock? = nil,
                     _ body: (NativeLoginFixture, FakeAppleAPIServer) async throws -> Void) async throws {
        let apple = try FakeAppleAPIServer()
        do {
            try await NativeLoginFixture.with(clock: clock, configure: { $0.appleBaseURL = apple.baseURL }) { fixture in
                let callback = "http://127.0.0.1:\(fixture.herald.application.port)/api/oauth/acme/apple/callback"
                try expectStatus(200, await fixture.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                    "enabled": true, "clientId": .string(servicesID),
                    "audiences": [.string(AppleTokenMinter.defaultAudience)],
                    "teamId": .string(apple.teamID), "keyId": .string(apple.keyID),
                    "privateKey": .string(apple.privateKeyPEM), "returnUrls": [.string(callback)],
                ]))
                try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                           json: ["redirectUris": [.string(returnTo)]]))
                try await body(fixture, apple)
            }
        } catch {
            await apple.stop()
            throw error
        }
        await apple.stop()
    }

    /// Starts the flow; returns Apple's authorize parameters.
    static func start(_ fixture: NativeLoginFixture, query: String = "clientId=ios-app&returnTo=\(RedirectURI.encode(returnTo))")
        async throws -> [String: String] {
        let response = try await fixture.send("GET", "/api/oauth/acme/apple/login?\(query)")
        try expectStatus(302, response)
        return queryParameters(try #require(response.header("Location")))
    }

    /// What fake Apple would post back after the user agreed: a code whose exchange yields an
    /// ID token for the Services ID with Herald's nonce.
    static func approve(_ fixture: NativeLoginFixture, _ apple: FakeAppleAPIServer, _ authorize: [String: String],
                        subject: String = "000111.web.user", code: String = "web-code-\(UUID().uuidString)",
                        user: String? = #"{"name":{"firstName":"Ada","lastName":"Lovelace"},"email":"ada@example.com"}"#)
        -> [(String, String)] {
        let idToken = fixture.minter.token { spec in
            spec.claims["aud"] = .string(servicesID)
            spec.claims["sub"] = .string(subject)
            spec.claims["nonce"] = .string(authorize["nonce"] ?? "")
            spec.claims["email"] = "ada@example.com"
        }
        apple.issue(code: code, refreshToken: "apple-web-refresh-\(subject)", idToken: idToken)
        var form = [("state", authorize["state"] ?? ""), ("code", code), ("id_token", idToken)]
        if let user { form.append(("user", user)) }
        return form
    }

    static func postCallback(_ fixture: NativeLoginFixture, _ form: [(String, String)]) async throws -> TestHTTPClient.Response {
        try await fixture.herald.request("POST", "/api/oauth/acme/apple/callback",
                                         headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                         body: Array(form.map { "\($0.0)=\(RedirectURI.encode($0.1))" }.joined(separator: "&").utf8))
    }

    /// The JSON of the result page's `herald-login-result` element.
    static func result(_ response: TestHTTPClient.Response) throws -> [String: JSONValue] {
        let html = response.text
        let open = #"<script type="application/json" id="herald-login-result">"#
        let start = try #require(html.range(of: open))
        let end = try #require(html.range(of: "</script>", range: start.upperBound..<html.endIndex))
        let json = String(html[start.upperBound..<end.lowerBound])
        return try #require(try JSONValue.parse(Array(json.utf8)).objectValue)
    }

    @Test("login → Apple → form_post callback → a 200 result page with the tokens, the name stored, Apple's token kept")
    func fullFlow() async throws {
        try await Self.with { fixture, apple in
            let authorize = try await Self.start(fixture)
            #expect(authorize["response_type"] == "code id_token")
            #expect(authorize["response_mode"] == "form_post")
            #expect(authorize["scope"] == "name email")
            #expect(authorize["client_id"] == Self.servicesID)
            #expect(authorize["redirect_uri"]?.hasSuffix("/api/oauth/acme/apple/callback") == true)
            let state = try #require(authorize["state"])
            let nonce = try #require(authorize["nonce"])
            #expect(state.utf8.count >= 43 && nonce.count == 64)

            let page = try await Self.postCallback(fixture, Self.approve(fixture, apple, authorize))
            #expect(page.status == 200, "\(page.text)")
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("Content-Security-Policy")?.contains("default-src 'none'") == true)
            #expect(page.header("X-Frame-Options") == "DENY")
            #expect(page.header("Cache-Control") == "no-store")
            let result = try Self.result(page)
            #expect(result["status"] == "success")
            let access = try #require(result["accessToken"]?.stringValue)
            let refresh = try #require(result["refreshToken"]?.stringValue)
            #expect(result["user"]?["name"]?["givenName"] == "Ada")
            // The human table masks tokens: the full ones are only in the JSON element (and the link).
            #expect(page.text.contains("<td>\(String(refresh.prefix(6)))…</td>"))
            #expect(!page.text.contains("<td>\(access)</td>"))
            // The deep link goes to the registered returnTo, the result in its fragment.
            #expect(page.text.contains("href=\"\(Self.returnTo)#herald-login-result="))
            #expect(try await fixture.me(access).status == 200)

            let exchange = try #require(apple.calls.first { $0.path == "/auth/token" })
            #expect(exchange.secretValid && exchange.form["client_id"] == Self.servicesID)
            #expect(exchange.form["redirect_uri"] == authorize["redirect_uri"])
            let kept = try await fixture.herald.application.context.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM apple_refresh_tokens WHERE client_id = ?", .text(Self.servicesID))?.int("n")
            }
            #expect(kept == 1)

            // The state was single use.
            let again = try await Self.postCallback(fixture, [("state", state), ("code", "x")])
            #expect(again.status == 400)
            #expect(try Self.result(again)["code"] == "invalid_state")
        }
    }

    @Test("the callback also accepts GET; Apple's error (the user cancelled) is a 200 result for the app")
    func getAndCancel() async throws {
        try await Self.with { fixture, apple in
            let authorize = try await Self.start(fixture)
            let cancelled = try await fixture.send("GET", "/api/oauth/acme/apple/callback?state=\(authorize["state"] ?? "")&error=user_cancelled_authorize")
            #expect(cancelled.status == 200)
            let result = try Self.result(cancelled)
            #expect(result["status"] == "cancelled" && result["error"] == "user_cancelled_authorize")
            #expect(cancelled.text.contains("href=\"\(Self.returnTo)\""))

            let second = try await Self.start(fixture)
            let form = Self.approve(fixture, apple, second)
            let query = form.map { "\($0.0)=\(RedirectURI.encode($0.1))" }.joined(separator: "&")
            let viaGet = try await fixture.send("GET", "/api/oauth/acme/apple/callback?\(query)")
            #expect(viaGet.status == 200, "\(viaGet.text)")
            #expect(try Self.result(viaGet)["status"] == "success")
        }
    }

    @Test("missing code and id_token, an unknown state, and a token for another nonce each get their own answer")
    func failures() async throws {
        try await Self.with { fixture, apple in
            let authorize = try await Self.start(fixture)
            let missing = try await Self.postCallback(fixture, [("state", authorize["state"] ?? "")])
            #expect(missing.status == 400)
            #expect(try Self.result(missing)["code"] == "missing_credentials")

            let unknown = try await Self.postCallback(fixture, [("state", "never-issued"), ("code", "c")])
            #expect(try Self.result(unknown)["code"] == "invalid_state")

            // An ID token whose nonce is not this login's: refused by the shared verifier.
            let other = try await Self.start(fixture)
            var foreign = other
            foreign["nonce"] = String(repeating: "0", count: 64)
            var form = Self.approve(fixture, apple, foreign)
            form[0] = ("state", other["state"] ?? "")
            let refused = try await Self.postCallback(fixture, form)
            #expect(refused.status == 401)
            let result = try Self.result(refused)
            #expect(result["code"] == "invalid_apple_token")
            #expect(result["details"]?["reason"] == "nonce")

            // Apple's token endpoint down: the page says so (503), no account is made.
            apple.fail(with: 500)
            let third = try await Self.start(fixture)
            let down = try await Self.postCallback(fixture, Self.approve(fixture, apple, third, subject: "000222.down"))
            #expect(down.status == 503)
            #expect(try Self.result(down)["code"] == "apple_unavailable")
        }
    }

    @Test("a state older than ten minutes is refused, and refused for good")
    func stateExpires() async throws {
        let clock = TestClock(Date())
        try await Self.with(clock: clock) { fixture, apple in
            let authorize = try await Self.start(fixture)
            let form = Self.approve(fixture, apple, authorize)
            clock.advance(by: 601)
            let late = try await Self.postCallback(fixture, form)
            #expect(late.status == 400)
            #expect(try Self.result(late)["code"] == "invalid_state")
            #expect(!apple.calls.contains { $0.path == "/auth/token" })
        }
    }

    @Test("branch B from the web flow: downstreamState → the third party's redirect with a code")
    func thirdParty() async throws {
        try await Self.with { fixture, apple in
            let oauth = try await NativeLoginAtomicityTests.thirdParty(fixture)
            try expectStatus(200, await oauth.authorize(state: "web-b", json: true))
            let handle = oauth.downstreamState(for: "web-b")
            let authorize = try await Self.start(fixture, query: "clientId=\(OAuthFixture.publicClient)&downstreamState=\(handle)")
            let page = try await Self.postCallback(fixture, Self.approve(fixture, apple, authorize, subject: "000333.web.b"))
            #expect(page.status == 200, "\(page.text)")
            let redirect = try #require(try Self.result(page)["redirectUri"]?.stringValue)
            #expect(redirect.hasPrefix(OAuthFixture.redirect + "?code=ac_"))
            #expect(queryParameters(redirect)["state"] == "web-b")
            #expect(try await oauth.exchange(try #require(queryParameters(redirect)["code"])).status == 200)
        }
    }

    @Test("start refuses an unregistered returnTo, a third-party client without downstreamState, and a provider without Return URLs")
    func startChecks() async throws {
        try await Self.with { fixture, _ in
            let unregistered = try await fixture.send("GET", "/api/oauth/acme/apple/login?clientId=ios-app&returnTo=https%3A%2F%2Fevil.example%2F")
            #expect(unregistered.status == 400)
            #expect(unregistered.json["details"]?["fields"]?["returnTo"] != nil)
            let thirdParty = try await fixture.send("GET", "/api/oauth/acme/apple/login?clientId=partner")
            #expect(thirdParty.status == 403 && thirdParty.code == "client_not_allowed")
            let noClient = try await fixture.send("GET", "/api/oauth/acme/apple/login")
            #expect(noClient.status == 400)
            try expectStatus(200, await fixture.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                "enabled": true, "clientId": .string(Self.servicesID), "returnUrls": [],
            ]))
            let unconfigured = try await fixture.send("GET", "/api/oauth/acme/apple/login?clientId=ios-app")
            #expect(unconfigured.status == 404 && unconfigured.code == "provider_not_configured")
            let bad = try await fixture.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                "enabled": true, "clientId": .string(Self.servicesID), "returnUrls": ["http://example.com/cb"],
            ])
            #expect(bad.status == 400)
        }
    }
}

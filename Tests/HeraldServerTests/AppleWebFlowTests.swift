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

    static func with(clock: TestClock? = nil, configure: @escaping (inout HeraldConfiguration) -> Void = { _ in },
                     _ body: (NativeLoginFixture, FakeAppleAPIServer) async throws -> Void) async throws {
        let apple = try FakeAppleAPIServer()
        do {
            try await NativeLoginFixture.with(clock: clock, configure: { configuration in
                configuration.appleBaseURL = apple.baseURL
                configure(&configuration)
            }) { fixture in
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

    static let defaultStart = "clientId=ios-app&returnTo=\(RedirectURI.encode(returnTo))"

    /// One browser's start of the flow: Apple's authorize parameters, and the cookie binding
    /// the state to that browser (`name=value`, as the browser sends it back).
    struct Start {
        var authorize: [String: String]
        let cookie: String
        subscript(_ name: String) -> String? {
            get { authorize[name] }
            set { authorize[name] = newValue }
        }
    }

    /// Starts the flow in a browser holding `cookie` (a new browser when nil).
    static func start(_ fixture: NativeLoginFixture, query: String = defaultStart, cookie: String? = nil)
        async throws -> Start {
        let response = try await fixture.send("GET", "/api/oauth/acme/apple/login?\(query)",
                                              headers: cookie.map { [("Cookie", $0)] } ?? [])
        try expectStatus(302, response)
        let setCookie = try #require(response.header("Set-Cookie"))
        return Start(authorize: queryParameters(try #require(response.header("Location"))),
                     cookie: String(setCookie.prefix { $0 != ";" }))
    }

    /// What fake Apple would post back after the user agreed: a code whose exchange yields an
    /// ID token for the Services ID with Herald's nonce.
    static func approve(_ fixture: NativeLoginFixture, _ apple: FakeAppleAPIServer, _ authorize: Start,
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

    /// Apple's form_post, arriving in the browser holding `cookie` (none when nil).
    static func postCallback(_ fixture: NativeLoginFixture, _ form: [(String, String)],
                             cookie: String?) async throws -> TestHTTPClient.Response {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let cookie { headers.append(("Cookie", cookie)) }
        return try await fixture.herald.request("POST", "/api/oauth/acme/apple/callback", headers: headers,
                                                body: Array(form.map { "\($0.0)=\(RedirectURI.encode($0.1))" }
                                                    .joined(separator: "&").utf8))
    }

    /// Apple's answer posted back to the browser that started `start`.
    static func postCallback(_ fixture: NativeLoginFixture, _ form: [(String, String)],
                             in start: Start) async throws -> TestHTTPClient.Response {
        try await postCallback(fixture, form, cookie: start.cookie)
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

            let page = try await Self.postCallback(fixture, Self.approve(fixture, apple, authorize), in: authorize)
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
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains(#"herald_logins_total{provider="apple",door="web",outcome="success",reason="created"} 1"#))

            let exchange = try #require(apple.calls.first { $0.path == "/auth/token" })
            #expect(exchange.secretValid && exchange.form["client_id"] == Self.servicesID)
            #expect(exchange.form["redirect_uri"] == authorize["redirect_uri"])
            let kept = try await fixture.herald.application.services.database.read { db in
                try db.queryOne("SELECT COUNT(*) AS n FROM apple_refresh_tokens WHERE client_id = ?", .text(Self.servicesID))?.int("n")
            }
            #expect(kept == 1)

            // The state was single use.
            let again = try await Self.postCallback(fixture, [("state", state), ("code", "x")], in: authorize)
            #expect(again.status == 400)
            #expect(try Self.result(again)["code"] == "invalid_state")
        }
    }

    @Test("Apple's error (the user cancelled) is a 200 result by GET and by POST; a code or ID token by GET is refused, its state kept")
    func cancelAndGet() async throws {
        try await Self.with { fixture, apple in
            let authorize = try await Self.start(fixture)
            let cancelled = try await fixture.send(
                "GET", "/api/oauth/acme/apple/callback?state=\(authorize["state"] ?? "")&error=user_cancelled_authorize",
                headers: [("Cookie", authorize.cookie)])
            #expect(cancelled.status == 200)
            let result = try Self.result(cancelled)
            #expect(result["status"] == "cancelled" && result["error"] == "user_cancelled_authorize")
            #expect(cancelled.text.contains("href=\"\(Self.returnTo)\""))

            let posted = try await Self.start(fixture)
            let cancelledByPost = try await Self.postCallback(
                fixture, [("state", posted["state"] ?? ""), ("error", "user_cancelled_authorize")], in: posted)
            #expect(cancelledByPost.status == 200)
            #expect(try Self.result(cancelledByPost)["status"] == "cancelled")

            // Apple never sends credentials in a query: a link carrying them is refused before
            // its state is looked at, so the browser that began the flow still completes it.
            let second = try await Self.start(fixture)
            let form = Self.approve(fixture, apple, second)
            let query = form.map { "\($0.0)=\(RedirectURI.encode($0.1))" }.joined(separator: "&")
            let viaGet = try await fixture.send("GET", "/api/oauth/acme/apple/callback?\(query)",
                                                headers: [("Cookie", second.cookie)])
            #expect(viaGet.status == 400)
            #expect(try Self.result(viaGet)["code"] == "bad_request")
            #expect(!apple.calls.contains { $0.path == "/auth/token" })
            let posted2 = try await Self.postCallback(fixture, form, in: second)
            #expect(posted2.status == 200, "\(posted2.text)")
        }
    }

    @Test("login CSRF: Apple's answer to one browser's flow does not sign in another browser, and stays usable by its own")
    func stateIsBoundToTheBrowserThatBeganIt() async throws {
        try await Self.with { fixture, apple in
            // The attacker begins, is approved by Apple, and keeps the answer unsubmitted.
            let attacker = try await Self.start(fixture)
            let answer = Self.approve(fixture, apple, attacker, subject: "000666.attacker")
            // The victim's browser is made to post it: without a cookie, and with its own.
            let noCookie = try await Self.postCallback(fixture, answer, cookie: nil)
            #expect(noCookie.status == 400)
            #expect(try Self.result(noCookie)["code"] == "invalid_state")
            let victim = try await Self.start(fixture)
            let otherBrowser = try await Self.postCallback(fixture, answer, in: victim)
            #expect(otherBrowser.status == 400)
            #expect(try Self.result(otherBrowser)["code"] == "invalid_state")
            #expect(try Self.result(otherBrowser)["accessToken"] == nil)
            #expect(!apple.calls.contains { $0.path == "/auth/token" })
            // The attempt did not burn the state for the browser that began it.
            let own = try await Self.postCallback(fixture, answer, in: attacker)
            #expect(own.status == 200, "\(own.text)")
        }
    }

    @Test("the binding cookie is __Host-, Secure, HttpOnly, SameSite=None, ten minutes; a browser keeps one binding for two tabs")
    func bindingCookie() async throws {
        try await Self.with { fixture, apple in
            let response = try await fixture.send("GET", "/api/oauth/acme/apple/login?\(Self.defaultStart)")
            let setCookie = try #require(response.header("Set-Cookie"))
            let attributes = setCookie.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            #expect(attributes.first?.hasPrefix("__Host-herald-apple-web=") == true)
            #expect(Set(attributes.dropFirst()) == ["Path=/", "Max-Age=600", "Secure", "HttpOnly", "SameSite=None"])
            // Two tabs of one browser: the second start renews the same binding, so both finish.
            let first = try await Self.start(fixture)
            let second = try await Self.start(fixture, cookie: first.cookie)
            #expect(second.cookie == first.cookie && second["state"] != first["state"])
            let secondPage = try await Self.postCallback(fixture, Self.approve(fixture, apple, second, subject: "000777.tab2"),
                                                         in: second)
            #expect(secondPage.status == 200, "\(secondPage.text)")
            let firstPage = try await Self.postCallback(fixture, Self.approve(fixture, apple, first, subject: "000777.tab1"),
                                                        in: first)
            #expect(firstPage.status == 200, "\(firstPage.text)")
            // A malformed cookie is no binding: a fresh one is set.
            let fresh = try await Self.start(fixture, cookie: "__Host-herald-apple-web=short")
            #expect(fresh.cookie != "__Host-herald-apple-web=short")
        }
    }

    @Test("missing code and id_token, an unknown state, and a token for another nonce each get their own answer")
    func failures() async throws {
        try await Self.with { fixture, apple in
            let authorize = try await Self.start(fixture)
            let missing = try await Self.postCallback(fixture, [("state", authorize["state"] ?? "")], in: authorize)
            #expect(missing.status == 400)
            #expect(try Self.result(missing)["code"] == "missing_credentials")

            let unknown = try await Self.postCallback(fixture, [("state", "never-issued"), ("code", "c")], in: authorize)
            #expect(try Self.result(unknown)["code"] == "invalid_state")

            // An ID token whose nonce is not this login's: refused by the shared verifier.
            let other = try await Self.start(fixture)
            var foreign = other
            foreign["nonce"] = String(repeating: "0", count: 64)
            var form = Self.approve(fixture, apple, foreign)
            form[0] = ("state", other["state"] ?? "")
            let refused = try await Self.postCallback(fixture, form, in: other)
            #expect(refused.status == 401)
            let result = try Self.result(refused)
            #expect(result["code"] == "invalid_apple_token")
            #expect(result["details"]?["reason"] == "nonce")
            // Recorded as native logins are, under the web door.
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains(#"herald_logins_total{provider="apple",door="web",outcome="rejected",reason="nonce"} 1"#))
            #expect(fixture.herald.logs.captured.contains {
                $0.contains(#""event":"login""#) && $0.contains(#""door":"web""#) && $0.contains(#""reason":"nonce""#)
            })

            // Apple's token endpoint down: the page says so (503), no account is made.
            apple.fail(with: 500)
            let third = try await Self.start(fixture)
            let down = try await Self.postCallback(fixture, Self.approve(fixture, apple, third, subject: "000222.down"),
                                                   in: third)
            #expect(down.status == 503)
            #expect(try Self.result(down)["code"] == "apple_unavailable")
            let events = try await fixture.admin("GET", "/api/admin/realms/acme/events?type=apple.code_exchange_refused")
            #expect(events.json["items"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("a state older than ten minutes is refused, and refused for good")
    func stateExpires() async throws {
        let clock = TestClock(Date())
        try await Self.with(clock: clock) { fixture, apple in
            let authorize = try await Self.start(fixture)
            let form = Self.approve(fixture, apple, authorize)
            clock.advance(by: 601)
            let late = try await Self.postCallback(fixture, form, in: authorize)
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
            let page = try await Self.postCallback(fixture, Self.approve(fixture, apple, authorize, subject: "000333.web.b"),
                                                   in: authorize)
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

    @Test("Apple refusing the exchange (invalid_client, invalid_grant) is a failed sign-in, not an outage, with an event naming Apple's error")
    func appleRefusalsAreNotOutages() async throws {
        try await Self.with { fixture, apple in
            // A code Apple does not know: invalid_grant.
            let first = try await Self.start(fixture)
            var form = Self.approve(fixture, apple, first)
            form[1] = ("code", "never-issued")
            let badCode = try await Self.postCallback(fixture, form, in: first)
            #expect(badCode.status == 400, "\(badCode.text)")
            #expect(try Self.result(badCode)["code"] == "apple_refused")
            #expect(try Self.result(badCode)["details"]?["reason"] == "invalid_grant")
            #expect(!badCode.text.contains("try again"))

            // A key Apple does not accept (another .p8 under the same Key ID): invalid_client.
            let otherKey = try PrivateKey.generate(for: .es256).pkcs8PEM()
            let callback = "http://127.0.0.1:\(fixture.herald.application.port)/api/oauth/acme/apple/callback"
            try expectStatus(200, await fixture.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                "enabled": true, "clientId": .string(Self.servicesID), "audiences": [.string(AppleTokenMinter.defaultAudience)],
                "teamId": .string(apple.teamID), "keyId": .string(apple.keyID), "privateKey": .string(otherKey),
                "returnUrls": [.string(callback)],
            ]))
            let second = try await Self.start(fixture)
            let badKey = try await Self.postCallback(fixture, Self.approve(fixture, apple, second), in: second)
            #expect(badKey.status == 400, "\(badKey.text)")
            #expect(try Self.result(badKey)["details"]?["reason"] == "invalid_client")

            let events = try await fixture.admin("GET", "/api/admin/realms/acme/events?type=apple.code_exchange_refused")
            let reasons = events.json["items"]?.arrayValue?.compactMap { $0["reason"]?.stringValue }
            #expect(reasons == ["invalid_client", "invalid_grant"])
            #expect(events.json["items"]?.arrayValue?.first?["actor"] == "apple")
        }
    }

    @Test("a returnTo the admin removed during the flow receives nothing at the callback")
    func returnToIsCheckedAgainAtTheCallback() async throws {
        try await Self.with { fixture, apple in
            let authorize = try await Self.start(fixture)
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                       json: ["redirectUris": ["https://app.example.com/other"]]))
            let page = try await Self.postCallback(fixture, Self.approve(fixture, apple, authorize), in: authorize)
            #expect(page.status == 400)
            let result = try Self.result(page)
            #expect(result["code"] == "invalid_return_to" && result["accessToken"] == nil)
            #expect(!page.text.contains(Self.returnTo))
            #expect(!apple.calls.contains { $0.path == "/auth/token" })
        }
    }

    @Test("starting is limited per address, and a downstreamState must name a pending authorization; refused starts keep no row")
    func startIsBounded() async throws {
        try await Self.with(configure: { $0.requestLimits.perIP = RequestLimit(requests: 3, windowSeconds: 3_600) }) {
            fixture, _ in
            func rows() async throws -> Int64? {
                try await fixture.herald.application.services.database.read { db in
                    try db.queryOne("SELECT COUNT(*) AS n FROM apple_web_states")?.int("n")
                }
            }
            let oauth = try await NativeLoginAtomicityTests.thirdParty(fixture)
            let unknown = try await fixture.send(
                "GET", "/api/oauth/acme/apple/login?clientId=\(OAuthFixture.publicClient)&downstreamState=ds_made-up")
            #expect(unknown.status == 400 && unknown.json["details"]?["fields"]?["downstreamState"] != nil)
            let long = String(repeating: "x", count: 129)
            let tooLong = try await fixture.send(
                "GET", "/api/oauth/acme/apple/login?clientId=\(OAuthFixture.publicClient)&downstreamState=\(long)")
            #expect(tooLong.status == 400)
            try expectStatus(200, await oauth.authorize(state: "bounded", json: true))
            _ = try await Self.start(fixture, query: "clientId=\(OAuthFixture.publicClient)&downstreamState=\(oauth.downstreamState(for: "bounded"))")
            _ = try await Self.start(fixture)
            #expect(try await rows() == 2)
            let limited = try await fixture.send("GET", "/api/oauth/acme/apple/login?\(Self.defaultStart)")
            #expect(limited.status == 429 && limited.header("Retry-After") != nil)
            #expect(try await rows() == 2)
        }
    }
}

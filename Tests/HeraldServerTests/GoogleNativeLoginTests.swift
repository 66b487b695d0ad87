import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("Google native login")
struct GoogleNativeLoginTests {
    /// The `picture` of the minter's tokens.
    static let photo: JSONValue = "https://lh3.googleusercontent.com/a/photo"
    @Test("branch A: a verified Google ID token signs the app in; the same sub returns to the same account, named from the token",
          arguments: Backend.allCases)
    func firstPartySession(backend: Backend) async throws {
        try await GoogleLoginFixture.with(backend: backend) { fixture in
            let first = try await fixture.loginOK()
            #expect(first["isNewUser"] == true)
            #expect(first["tokenType"] == "Bearer")
            let user = try #require(first["user"]?.objectValue)
            #expect(user["email"] == "ada@example.com")
            #expect(user["emailVerified"] == true)
            #expect(user["name"]?.objectValue?["givenName"] == "Ada")
            #expect(user["identities"]?.arrayValue?.first?.objectValue?["provider"] == "google")
            let again = try await fixture.loginOK()
            #expect(again["isNewUser"] == false)
            #expect(again["userId"] == first["userId"])
            let me = try await fixture.base.me(again["accessToken"]?.stringValue)
            #expect(me.status == 200)
            let refreshed = try await fixture.base.refresh(again["refreshToken"]?.stringValue ?? "")
            #expect(refreshed.status == 200)
        }
    }

    @Test("branch B: with downstreamState the Google login completes the backend's authorization; the code is exchanged with PKCE",
          arguments: Backend.allCases)
    func downstreamCompletion(backend: Backend) async throws {
        let google = try FakeJWKSServer(document: fakeGoogleKeys.document)
        defer { google.stop() }
        try await RunningHerald.with(backend: backend, configure: { $0.googleJWKSURL = google.url.absoluteString }) { herald in
            let fixture = try await OAuthFixture.make(herald)
            try expectStatus(200, try await herald.admin("PUT", "/api/admin/realms/acme/providers/google", json: [
                "enabled": true, "clientIds": [.string(GoogleLoginFixture.clientID)]]))
            #expect(try await fixture.authorize(state: "backend-state", json: true).status == 200)
            let nonce = "raw-\(UUID().uuidString)"
            let token = GoogleTokenMinter(keys: fakeGoogleKeys, now: Date()).token { $0.claims["nonce"] = .string(nonce) }
            let body: JSONValue = ["idToken": .string(token), "clientId": .string(OAuthFixture.publicClient),
                                   "nonce": .string(nonce), "downstreamState": .string(fixture.downstreamState(for: "backend-state"))]
            let login = try await herald.request("POST", "/api/oauth/acme/google/native-login",
                                                 headers: [("Content-Type", "application/json")],
                                                 body: Array(try JSONEncoder().encode(body)))
            try expectStatus(200, login)
            #expect(login.json["accessToken"] == nil)
            let redirect = try #require(login.json["redirectUri"]?.stringValue)
            #expect(redirect.hasPrefix(OAuthFixture.redirect + "?"))
            let parameters = queryParameters(redirect)
            #expect(parameters["state"] == "backend-state")
            let tokens = try await fixture.exchange(try #require(parameters["code"]))
            try expectStatus(200, tokens)
            let claims = try await fixture.verifiedClaims(try #require(tokens.json["access_token"]?.stringValue))
            #expect(claims["client_id"] == .string(OAuthFixture.publicClient))
            let userinfo = try await fixture.userinfo(try #require(tokens.json["access_token"]?.stringValue))
            #expect(userinfo.json["email"] == "ada@example.com")
            // The `profile` scope brings the picture kept from the token, in userinfo and the ID token.
            #expect(userinfo.json["picture"] == Self.photo)
            let idToken = try await fixture.verifiedClaims(try #require(tokens.json["id_token"]?.stringValue))
            #expect(idToken["picture"] == Self.photo)
            #expect(idToken["name"] == "Ada Lovelace")
        }
    }

    /// Each of the verifier's refusals, as the app sees it: 401 `invalid_google_token` naming the check.
    static let refusals: [(reason: String, change: @Sendable (inout AppleTokenSpec) -> Void)] = [
        ("audience", { $0.claims["aud"] = "someone-else.apps.googleusercontent.com"; $0.claims["azp"] = nil }),
        ("azp", { $0.claims["azp"] = "someone-else.apps.googleusercontent.com" }),
        ("issuer", { $0.claims["iss"] = "https://accounts.google.com.evil" }),
        ("expired", {
            $0.claims["iat"] = .number((Date().timeIntervalSince1970 - 1_200).rounded())
            $0.claims["exp"] = .number((Date().timeIntervalSince1970 - 600).rounded())
        }),
        ("nonce", { $0.claims["nonce"] = "another-nonce" }),
        ("signature", { $0.signingKey = fakeGoogleKeys.rotated }),
        ("algorithm", { $0.alg = "ES256"; $0.kid = fakeGoogleKeys.ecKeyID; $0.signingKey = fakeGoogleKeys.ec }),
        ("unknown_key", { $0.kid = "no-such-key" }),
    ]

    @Test("every refusal answers 401 invalid_google_token with details.reason, and changes nothing")
    func refusals() async throws {
        try await GoogleLoginFixture.with { fixture in
            for (reason, change) in Self.refusals {
                let nonce = fixture.base.freshNonce()
                let response = try await fixture.login(token: fixture.token(nonce: nonce, change), nonce: nonce)
                #expect(response.status == 401, "\(reason): \(response.text)")
                #expect(response.code == "invalid_google_token", "\(reason)")
                #expect(response.json["details"]?.objectValue?["reason"] == .string(reason))
            }
            let accounts = try await fixture.base.admin("GET", "/api/admin/realms/acme/accounts")
            #expect(accounts.json["items"]?.arrayValue?.isEmpty == true, "a refused login created an account")
            let malformed = try await fixture.login(token: "not.a.jwt", nonce: "n")
            #expect(malformed.json["details"]?.objectValue?["reason"] == "malformed")
        }
    }

    @Test("a token is accepted once: its second use is refused as replayed")
    func replay() async throws {
        try await GoogleLoginFixture.with { fixture in
            let nonce = fixture.base.freshNonce()
            let token = fixture.token(nonce: nonce)
            try expectStatus(200, try await fixture.login(token: token, nonce: nonce))
            let again = try await fixture.login(token: token, nonce: nonce)
            #expect(again.status == 401)
            #expect(again.json["details"]?.objectValue?["reason"] == "replayed")
        }
    }

    @Test("failed Google attempts count against the realm's per-IP limit: then 429 rate_limited with Retry-After, even for a valid token",
          arguments: Backend.allCases)
    func failedAttemptsAreLimited(backend: Backend) async throws {
        try await GoogleLoginFixture.with(backend: backend,
                                          realmFields: ["rateLimit": ["failuresPerWindow": 3, "windowSeconds": 300]],
                                          clock: NativeLoginFixture.clockInsideOneWindow()) { fixture in
            for _ in 0..<3 {
                let nonce = fixture.base.freshNonce()
                let bad = try await fixture.login(token: fixture.token(nonce: nonce) { $0.claims["aud"] = "other.apps.googleusercontent.com" },
                                                  nonce: nonce)
                #expect(bad.status == 401)
            }
            let nonce = fixture.base.freshNonce()
            let limited = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce)
            #expect(limited.status == 429)
            #expect(limited.code == "rate_limited")
            #expect((1...300).contains(Int(limited.header("Retry-After") ?? "") ?? 0))
        }
    }

    @Test("the nonce is required by default, and a realm's hostedDomain admits only its Workspace accounts")
    func nonceAndHostedDomain() async throws {
        try await GoogleLoginFixture.with(provider: ["enabled": true, "clientIds": [.string(GoogleLoginFixture.clientID)],
                                                     "hostedDomain": "example.com"]) { fixture in
            let missing = try await fixture.login(token: fixture.token(nonce: "n-1"), nonce: nil)
            #expect(missing.status == 401)
            #expect(missing.json["details"]?.objectValue?["reason"] == "nonce")
            let nonce = fixture.base.freshNonce()
            let outsider = try await fixture.login(token: fixture.token(nonce: nonce) { $0.claims["hd"] = "other.example" },
                                                   nonce: nonce)
            #expect(outsider.json["details"]?.objectValue?["reason"] == "hosted_domain")
            let personal = fixture.base.freshNonce()
            let gmail = try await fixture.login(token: fixture.token(nonce: personal) { $0.claims["hd"] = nil }, nonce: personal)
            #expect(gmail.json["details"]?.objectValue?["reason"] == "hosted_domain")
            try await fixture.loginOK()
        }
    }

    @Test("no Google provider, or a disabled one, answers 404 provider_not_configured")
    func notConfigured() async throws {
        try await GoogleLoginFixture.with(provider: nil) { fixture in
            let nonce = fixture.base.freshNonce()
            let response = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce)
            #expect(response.status == 404)
            #expect(response.code == "provider_not_configured")
            #expect(response.string("message").contains("Google"))
        }
        try await GoogleLoginFixture.with(provider: ["enabled": false, "clientIds": [.string(GoogleLoginFixture.clientID)]]) {
            fixture in
            let nonce = fixture.base.freshNonce()
            let response = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce)
            #expect(response.code == "provider_not_configured")
        }
    }

    @Test("Google's keys unreachable: 503 google_unavailable with Retry-After, never 401; the token still works afterwards")
    func keysUnreachable() async throws {
        try await GoogleLoginFixture.with { fixture in
            fixture.google.setBehaviour(.status(500))
            let nonce = fixture.base.freshNonce()
            let token = fixture.token(nonce: nonce)
            let response = try await fixture.login(token: token, nonce: nonce)
            #expect(response.status == 503)
            #expect(response.code == "google_unavailable")
            #expect(response.header("Retry-After") != nil)
            #expect(response.header("Retry-After").flatMap(Int.init).map { $0 > 0 } == true)
            let accounts = try await fixture.base.admin("GET", "/api/admin/realms/acme/accounts")
            #expect(accounts.json["items"]?.arrayValue?.isEmpty == true)
        }
    }

    @Test("a verified Google email joins the account Apple created for it; an unverified one never links")
    func emailLinking() async throws {
        try await GoogleLoginFixture.with { fixture in
            let apple = try await fixture.base.loginOK(subject: "apple.sub.1", email: "same@example.com")
            let linked = try await fixture.loginOK(subject: "google.sub.1", email: "same@example.com")
            #expect(linked["isNewUser"] == false)
            #expect(linked["userId"] == apple["userId"])
            let providers = linked["user"]?.objectValue?["identities"]?.arrayValue?.compactMap {
                $0.objectValue?["provider"]?.stringValue
            }
            #expect(Set(providers ?? []) == ["apple", "google"])
            // A returning login reads every identity with its account: the same list, in the same order.
            let returning = try await fixture.base.loginOK(subject: "apple.sub.1", email: "same@example.com")
            #expect(returning["user"]?.objectValue?["identities"] == linked["user"]?.objectValue?["identities"])
            // The Apple account had no picture: the Google sign-in that links to it brings one.
            #expect(apple["user"]?.objectValue?["picture"] == .null)
            #expect(linked["user"]?.objectValue?["picture"] == Self.photo)

            let unverified = try await fixture.loginOK(subject: "google.sub.2", email: "same@example.com", emailVerified: false)
            #expect(unverified["isNewUser"] == true)
            #expect(unverified["userId"] != apple["userId"])
            #expect(unverified["user"]?.objectValue?["emailVerified"] == false)
        }
    }

    @Test("the token's picture is kept on first sign-in and shown by the login answer, /me, refresh and the admin API; a later sign-in's other picture does not replace it",
          arguments: Backend.allCases)
    func pictureKeptFromFirstSignIn(backend: Backend) async throws {
        try await GoogleLoginFixture.with(backend: backend) { fixture in
            let first = try await fixture.loginOK()
            #expect(first["user"]?.objectValue?["picture"] == Self.photo)
            let later = try await fixture.loginOK { $0.claims["picture"] = "https://lh3.googleusercontent.com/a/new-photo" }
            #expect(later["userId"] == first["userId"])
            #expect(later["user"]?.objectValue?["picture"] == Self.photo)
            let me = try await fixture.base.me(later["accessToken"]?.stringValue)
            #expect(me.json["picture"] == Self.photo)
            let refreshed = try await fixture.base.refresh(later["refreshToken"]?.stringValue ?? "")
            try expectStatus(200, refreshed)
            #expect(refreshed.json["user"]?.objectValue?["picture"] == Self.photo)
            let accountID = try #require(first["userId"]?.stringValue)
            let account = try await fixture.base.admin("GET", "/api/admin/realms/acme/accounts/\(accountID)")
            #expect(account.json["picture"] == Self.photo)
            let list = try await fixture.base.admin("GET", "/api/admin/realms/acme/accounts")
            #expect(list.json["items"]?.arrayValue?.first?.objectValue?["picture"] == Self.photo)
        }
    }

    @Test("an http, over-long or otherwise unusable picture is dropped and the sign-in succeeds; a later usable one fills it",
          arguments: Backend.allCases)
    func unusablePictureIsDropped(backend: Backend) async throws {
        try await GoogleLoginFixture.with(backend: backend) { fixture in
            let prefix = "https://lh3.googleusercontent.com/a/"
            let unusable = [
                "http://lh3.googleusercontent.com/a/photo", prefix + String(repeating: "p", count: 2_049 - prefix.utf8.count),
                "javascript:alert(1)", "data:image/png;base64,iVBORw0KGgo=", "//lh3.googleusercontent.com/a/photo",
                prefix + "my photo", prefix + "photo\u{7}", "",
            ]
            for (index, picture) in unusable.enumerated() {
                let answer = try await fixture.loginOK(subject: "google.unusable.\(index)", email: "u\(index)@example.com") {
                    $0.claims["picture"] = .string(picture)
                }
                #expect(answer["isNewUser"] == true)
                #expect(answer["user"]?.objectValue?["picture"] == .null, "picture \(index) was kept")
            }
            // 2,048 bytes is the limit, not over it.
            let longest = prefix + String(repeating: "p", count: 2_048 - prefix.utf8.count)
            let kept = try await fixture.loginOK(subject: "google.longest", email: "longest@example.com") {
                $0.claims["picture"] = .string(longest)
            }
            #expect(kept["user"]?.objectValue?["picture"] == .string(longest))
            // The account whose first picture was dropped has none, so its next sign-in fills it.
            let again = try await fixture.loginOK(subject: "google.unusable.0", email: "u0@example.com")
            #expect(again["isNewUser"] == false)
            #expect(again["user"]?.objectValue?["picture"] == Self.photo)
            let accountID = try #require(again["userId"]?.stringValue)
            let account = try await fixture.base.admin("GET", "/api/admin/realms/acme/accounts/\(accountID)")
            #expect(account.json["picture"] == Self.photo)
        }
    }

    @Test("an Apple account's picture is null in the login answer, /me and the admin API",
          arguments: Backend.allCases)
    func appleAccountHasNoPicture(backend: Backend) async throws {
        try await GoogleLoginFixture.with(backend: backend) { fixture in
            let apple = try await fixture.base.loginOK(subject: "apple.sub.picture", email: "apple@example.com")
            let user = try #require(apple["user"]?.objectValue)
            #expect(user["picture"] == .null)
            let me = try await fixture.base.me(apple["accessToken"]?.stringValue)
            #expect(me.json["picture"] == .null)
            let accountID = try #require(apple["userId"]?.stringValue)
            let account = try await fixture.base.admin("GET", "/api/admin/realms/acme/accounts/\(accountID)")
            #expect(account.json["picture"] == .null)
        }
    }

    @Test("logs and metrics name the provider; no token, nonce or email is logged")
    func logsAndMetrics() async throws {
        try await GoogleLoginFixture.with { fixture in
            let nonce = fixture.base.freshNonce()
            let token = fixture.token(nonce: nonce)
            try expectStatus(200, try await fixture.login(token: token, nonce: nonce))
            let bad = fixture.base.freshNonce()
            _ = try await fixture.login(token: fixture.token(nonce: bad) { $0.claims["iss"] = "evil" }, nonce: bad)
            let logs = fixture.base.herald.logs.captured
            for secret in [token, nonce, bad, "ada@example.com", "lh3.googleusercontent.com"] {
                #expect(!logs.contains { $0.contains(secret) }, "a log line holds a secret")
            }
            let loginLines = logs.filter { $0.contains(#""event":"login""#) }
            #expect(loginLines.count == 2)
            #expect(loginLines.allSatisfy { $0.contains(#""provider":"google""#) && $0.contains(#""door":"native""#) })
            let metrics = try await fixture.base.send("GET", "/metrics").text
            #expect(metrics.contains(#"herald_logins_total{provider="google",door="native",outcome="success",reason="created"} 1"#))
            #expect(metrics.contains(#"herald_logins_total{provider="google",door="native",outcome="rejected",reason="issuer"} 1"#))
            #expect(metrics.contains(#"herald_google_jwks_fetches_total{outcome="success"} 1"#))
            #expect(metrics.contains(#"herald_apple_jwks_fetches_total{outcome="success"} 0"#))
        }
    }
}

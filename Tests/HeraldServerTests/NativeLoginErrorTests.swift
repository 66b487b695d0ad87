import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("Apple native login, errors")
struct NativeLoginErrorTests {
    @Test("unknown or disabled realm → 404 not_found; missing or disabled provider → 404 provider_not_configured",
          arguments: Backend.allCases)
    func realmAndProviderPreChecks(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let nonce = fixture.freshNonce()
            let token = fixture.token(nonce: nonce)
            let unknown = try await fixture.login(token: token, nonce: nonce, realm: "nope")
            #expect(unknown.status == 404)
            #expect(unknown.code == "not_found")

            try await fixture.createRealm("bare")
            let bare = try await fixture.login(token: token, nonce: nonce, realm: "bare")
            #expect(bare.status == 404)
            #expect(bare.code == "provider_not_configured")
            #expect(bare.json["message"] == "Apple provider not configured or not enabled")

            try expectStatus(200, await fixture.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                "enabled": false, "clientId": "com.example.herald.web", "audiences": [.string(AppleTokenMinter.defaultAudience)],
            ]))
            let disabledProvider = try await fixture.login(token: token, nonce: nonce)
            #expect(disabledProvider.status == 404)
            #expect(disabledProvider.code == "provider_not_configured")

            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false]))
            let disabledRealm = try await fixture.login(token: token, nonce: nonce)
            #expect(disabledRealm.status == 404)
            #expect(disabledRealm.code == "not_found")
        }
    }

    @Test("unknown or disabled client → 400 bad_request; third-party or confidential client without downstreamState → 403",
          arguments: Backend.allCases)
    func clientPreChecks(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let nonce = fixture.freshNonce()
            let token = fixture.token(nonce: nonce)
            let unknown = try await fixture.login(token: token, nonce: nonce, clientID: "no-such-app")
            #expect(unknown.status == 400)
            #expect(unknown.code == "bad_request")

            let thirdParty = try await fixture.login(token: token, nonce: nonce, clientID: NativeLoginFixture.thirdParty)
            #expect(thirdParty.status == 403)
            #expect(thirdParty.code == "client_not_allowed")

            // A confidential first-party client would get session tokens without its secret.
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                       json: ["confidential": true]))
            let confidential = try await fixture.login(token: token, nonce: nonce)
            #expect(confidential.status == 403)
            #expect(confidential.code == "client_not_allowed")
            try expectStatus(200, await fixture.admin("PATCH", "/api/admin/realms/acme/clients/ios-app",
                                                       json: ["confidential": false, "enabled": false]))
            let disabled = try await fixture.login(token: token, nonce: nonce)
            #expect(disabled.status == 400)
            #expect(disabled.code == "bad_request")
        }
    }

    @Test("branch B with a state no pending authorization has → 400 invalid_downstream_state", arguments: Backend.allCases)
    func unknownDownstreamState(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let nonce = fixture.freshNonce()
            let response = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce,
                                             clientID: NativeLoginFixture.thirdParty,
                                             extra: ["downstreamState": "state-that-was-never-issued"])
            #expect(response.status == 400)
            #expect(response.code == "invalid_downstream_state")
        }
    }

    @Test("an identity token over 16 KiB → 400; missing fields → 400 naming them", arguments: Backend.allCases)
    func requestShape(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let huge = String(repeating: "a", count: 16_385)
            let tooLarge = try await fixture.login(token: huge, nonce: "n")
            #expect(tooLarge.status == 400)
            #expect(tooLarge.fieldProblems["identityToken"] != nil)

            let missing = try await fixture.send("POST", "/api/oauth/acme/apple/native-login", json: [:])
            #expect(missing.status == 400)
            #expect(Set(missing.fieldProblems.keys) == ["identityToken", "clientId"])
        }
    }

    @Test("each verification failure → 401 invalid_apple_token with details.reason", arguments: Backend.allCases)
    func verificationFailures(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            func reason(_ token: String, nonce: String?) async throws -> String? {
                let response = try await fixture.login(token: token, nonce: nonce)
                #expect(response.status == 401)
                #expect(response.code == "invalid_apple_token")
                return response.json["details"]?["reason"]?.stringValue
            }
            var nonce = fixture.freshNonce()
            #expect(try await reason("not.a.jwt", nonce: nonce) == "malformed")
            #expect(try await reason(fixture.token(nonce: nonce) { $0.alg = "none" }, nonce: nonce) == "algorithm")
            #expect(try await reason(fixture.token(nonce: nonce) { $0.kid = "unknown-kid" }, nonce: nonce) == "unknown_key")
            #expect(try await reason(fixture.token(nonce: nonce) { $0.tamperSignature = true }, nonce: nonce) == "signature")
            #expect(try await reason(fixture.token(nonce: nonce) { $0.claims["iss"] = "https://evil.example" }, nonce: nonce) == "issuer")
            #expect(try await reason(fixture.token(nonce: nonce) { $0.claims["aud"] = "com.other.app" }, nonce: nonce) == "audience")
            let past = (Date().timeIntervalSince1970 - 3600).rounded(.down)
            #expect(try await reason(fixture.token(nonce: nonce) {
                $0.claims["iat"] = .number(past - 600); $0.claims["exp"] = .number(past)
            }, nonce: nonce) == "expired")
            #expect(try await reason(fixture.token(nonce: nonce), nonce: "another-raw-nonce") == "nonce")
            #expect(try await reason(fixture.token(nonce: nonce), nonce: nil) == "nonce")

            nonce = fixture.freshNonce()
            let token = fixture.token(nonce: nonce)
            try expectStatus(200, await fixture.login(token: token, nonce: nonce))
            #expect(try await reason(token, nonce: nonce) == "replayed")
        }
    }

    /// Issue #19: hostile claim times (signed by the fake Apple, so every check would run) are
    /// 401 `malformed`, never a trap or a 5xx.
    @Test("hostile numeric claims → 401 invalid_apple_token malformed")
    func hostileNumericClaims() async throws {
        try await NativeLoginFixture.with(backend: .sqlite) { fixture in
            for (claim, value) in [("exp", 1e20), ("exp", 1e308), ("iat", -1e308), ("exp", 9.3e18), ("iat", 1.5),
                                   ("nbf", 1e20), ("auth_time", -1)] {
                let nonce = fixture.freshNonce()
                let response = try await fixture.login(token: fixture.token(nonce: nonce) { $0.claims[claim] = .number(value) },
                                                       nonce: nonce)
                #expect(response.status == 401, "\(claim)=\(value)")
                #expect(response.json["details"]?["reason"]?.stringValue == "malformed", "\(claim)=\(value)")
            }
        }
    }

    /// Issue #20 item 5: signed tokens past Apple's bounds are 401 with the bound's reason.
    @Test("a token over an hour old, living over a day, or with a sub over 255 bytes → 401 expired / malformed")
    func appleTokenBounds() async throws {
        try await NativeLoginFixture.with(backend: .sqlite) { fixture in
            let issued = Date().timeIntervalSince1970.rounded(.down)
            let rows: [(String, String, (inout AppleTokenSpec) -> Void)] = [
                ("iat 2 h ago", "expired", { $0.claims["iat"] = .number(issued - 7_200); $0.claims["exp"] = .number(issued + 600) }),
                // iat set too: the minter's own iat is read later, and may be a second on.
                ("exp 1 day + 1 s after iat", "malformed", { $0.claims["iat"] = .number(issued); $0.claims["exp"] = .number(issued + 86_401) }),
                ("sub of 256 bytes", "malformed", { $0.claims["sub"] = .string(String(repeating: "s", count: 256)) }),
            ]
            for (label, reason, customize) in rows {
                let nonce = fixture.freshNonce()
                let response = try await fixture.login(token: fixture.token(nonce: nonce, customize), nonce: nonce)
                #expect(response.status == 401, "\(label)")
                #expect(response.code == "invalid_apple_token", "\(label)")
                #expect(response.json["details"]?["reason"]?.stringValue == reason, "\(label)")
            }
        }
    }

    @Test("Apple's JWKS unreachable → 503 apple_unavailable with Retry-After, never 401", arguments: Backend.allCases)
    func appleUnavailable(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            fixture.apple.setBehaviour(.status(500))
            let nonce = fixture.freshNonce()
            let response = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce)
            #expect(response.status == 503)
            #expect(response.code == "apple_unavailable")
            #expect(Int(response.header("Retry-After") ?? "") ?? 0 >= 1)
        }
    }

    @Test("failed attempts per (realm, IP) beyond the realm's limit → 429 rate_limited with Retry-After, even for a valid token",
          arguments: Backend.allCases)
    func failedAttemptsAreLimited(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend,
                                          realmFields: ["rateLimit": ["failuresPerWindow": 3, "windowSeconds": 300]],
                                          clock: NativeLoginFixture.clockInsideOneWindow()) { fixture in
            for _ in 0..<3 {
                let nonce = fixture.freshNonce()
                let bad = try await fixture.login(token: fixture.token(nonce: nonce) { $0.claims["aud"] = "com.other.app" }, nonce: nonce)
                #expect(bad.status == 401)
            }
            let nonce = fixture.freshNonce()
            let limited = try await fixture.login(token: fixture.token(nonce: nonce), nonce: nonce)
            #expect(limited.status == 429)
            #expect(limited.code == "rate_limited")
            #expect((1...300).contains(Int(limited.header("Retry-After") ?? "") ?? 0))
        }
    }

    @Test("503s do not count as failed attempts", arguments: Backend.allCases)
    func outagesDoNotCount(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend,
                                          realmFields: ["rateLimit": ["failuresPerWindow": 1, "windowSeconds": 300]],
                                          clock: NativeLoginFixture.clockInsideOneWindow()) { fixture in
            fixture.apple.setBehaviour(.status(500))
            let nonce = fixture.freshNonce()
            let token = fixture.token(nonce: nonce)
            let first = try await fixture.login(token: token, nonce: nonce)
            let second = try await fixture.login(token: token, nonce: nonce)
            #expect(first.status == 503)
            #expect(second.status == 503)
        }
    }

    @Test("logs and errors never hold the identity token, nonce or email; one login line per attempt", arguments: Backend.allCases)
    func logHygiene(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            var secrets: [String] = ["someone@example.com", "hygiene@example.com"]
            let nonce = fixture.freshNonce()
            let token = fixture.token(subject: "sub.hygiene", nonce: nonce, email: "hygiene@example.com")
            let ok = try await fixture.login(token: token, nonce: nonce)
            try expectStatus(200, ok)
            secrets += [token, nonce, AppleTokenMinter.nonceClaim(for: nonce), ok.string("accessToken"), ok.string("refreshToken")]
            let badNonce = fixture.freshNonce()
            let badToken = fixture.token(nonce: badNonce) { $0.claims["aud"] = "com.other.app" }
            let bad = try await fixture.login(token: badToken, nonce: badNonce)
            #expect(bad.status == 401)
            secrets += [badToken, badNonce]
            // The replayed token must not show up either, nor in the error it gets.
            let replay = try await fixture.login(token: token, nonce: nonce)
            #expect(replay.status == 401)
            let refreshed = try await fixture.refresh(ok.string("refreshToken"))
            secrets += [refreshed.string("accessToken"), refreshed.string("refreshToken")]
            _ = try await fixture.me(refreshed.string("accessToken"))

            let logs = fixture.herald.logs.captured
            for secret in secrets where !secret.isEmpty {
                #expect(!logs.contains { $0.contains(secret) }, "a log line holds a secret")
                #expect(!bad.text.contains(secret) && !replay.text.contains(secret))
            }
            let unreadable = try await fixture.send("POST", "/api/oauth/acme/apple/native-login",
                                                    json: ["identityToken": .string(token), "clientId": 7])
            #expect(unreadable.status == 400)
            #expect(!unreadable.text.contains(token))
            let loginLines = fixture.herald.logs.captured.filter { $0.contains(#""event":"login""#) }
            #expect(!fixture.herald.logs.captured.contains { $0.contains(token) })
            #expect(loginLines.count == 4)
            #expect(loginLines.contains { $0.contains(#""reason":"bad_request""#) && $0.contains(#""client":"unknown""#) })
            #expect(loginLines.allSatisfy { $0.contains(#""provider":"apple""#) && $0.contains(#""realm":"acme""#) })
            #expect(loginLines.contains { $0.contains(#""outcome":"success""#) && $0.contains(ok.string("userId")) })
            #expect(loginLines.contains { $0.contains(#""reason":"audience""#) })
            #expect(loginLines.contains { $0.contains(#""reason":"replayed""#) })
            // One line per login: the attempt's line is its request's access-log line, with the
            // route and the status sent, and no separate request line for that route.
            let route = #""route":"/api/oauth/:realm/apple/native-login""#
            #expect(loginLines.allSatisfy { $0.contains(route) && $0.contains(#""method":"POST""#) })
            #expect(loginLines.filter { $0.contains(#""status":401"#) }.count == 2)
            #expect(loginLines.contains { $0.contains(#""status":400"#) && $0.contains(#""reason":"bad_request""#) })
            #expect(loginLines.contains { $0.contains(#""status":200"#) && $0.contains(#""outcome":"success""#) })
            #expect(!fixture.herald.logs.captured.contains { $0.contains(#""event":"request""#) && $0.contains(route) })
            let metrics = try await fixture.send("GET", "/metrics").text
            #expect(metrics.contains(#"herald_logins_total{provider="apple",door="native",outcome="rejected",reason="audience"} 1"#))
            #expect(metrics.contains(#"herald_logins_total{provider="apple",door="native",outcome="success",reason="created"} 1"#))
            #expect(metrics.contains(#"herald_apple_jwks_fetches_total{outcome="success"} 1"#))
        }
    }
}

import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("OAuth: authorize")
struct OAuthAuthorizeTests {
    @Test("a valid request is recorded and redirects to the realm's login page with the downstream state", arguments: Backend.allCases)
    func redirectsToLoginPage(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let response = try await fixture.authorize(state: "a b&c")
            #expect(response.status == 302)
            let location = try #require(response.header("Location"))
            #expect(location.hasPrefix(OAuthFixture.loginURL + "?"))
            #expect(queryParameters(location) == ["downstreamState": fixture.downstreamState(for: "a b&c")])
            #expect(fixture.downstreamState(for: "a b&c").hasPrefix(DownstreamAuthorizations.downstreamStatePrefix))
            #expect(response.header("Cache-Control") == "no-store")
        }
    }

    @Test("with Accept: application/json the answer is the downstream state and its lifetime", arguments: Backend.allCases)
    func jsonVariant(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald, realmFields: [:])
            let response = try await fixture.authorize(json: true)
            #expect(response.status == 200)
            let handle = try #require(response.json["downstreamState"]?.stringValue)
            #expect(handle.hasPrefix(DownstreamAuthorizations.downstreamStatePrefix) && handle != "st-123")
            #expect(response.json["expiresIn"] == 600)
        }
    }

    @Test("a realm without loginUrl cannot redirect a browser: server_error to the client", arguments: Backend.allCases)
    func realmWithoutLoginURL(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald, realmFields: [:])
            let response = try await fixture.authorize()
            #expect(response.status == 302)
            let parameters = queryParameters(try #require(response.header("Location")))
            #expect(parameters["error"] == "server_error")
            #expect(parameters["state"] == "st-123")
        }
    }

    @Test("an unknown or disabled client is refused with 400 unauthorized_client and never redirected", arguments: Backend.allCases)
    func unknownClientNotRedirected(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let unknown = try await fixture.authorize(client: "nobody")
            #expect(unknown.status == 400)
            #expect(unknown.header("Location") == nil)
            #expect(unknown.json["error"] == "unauthorized_client")
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme/clients/\(OAuthFixture.publicClient)", json: ["enabled": false])
            let disabled = try await fixture.authorize()
            #expect(disabled.status == 400)
            #expect(disabled.json["error"] == "unauthorized_client")
        }
    }

    @Test("an unregistered or missing redirect URI is refused with 400 invalid_request and never redirected", arguments: Backend.allCases)
    func unregisteredRedirectNotRedirected(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            for redirect in ["https://evil.example/callback", OAuthFixture.redirect + "/", OAuthFixture.otherRedirect] {
                let response = try await fixture.authorize(["redirect_uri": redirect])
                #expect(response.status == 400, "\(redirect)")
                #expect(response.header("Location") == nil)
                #expect(response.json["error"] == "invalid_request")
            }
            let missing = try await fixture.authorize(["redirect_uri": nil])
            #expect(missing.status == 400)
            #expect(missing.json["error"] == "invalid_request")
        }
    }

    @Test("plain PKCE, a missing method and a malformed challenge are redirected as invalid_request with state and iss", arguments: Backend.allCases)
    func pkceRules(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let cases: [[String: String?]] = [
                ["code_challenge_method": "plain"], ["code_challenge_method": nil],
                ["code_challenge": "too-short"], ["code_challenge": String(repeating: "a", count: 129)],
                ["code_challenge": String(repeating: "a", count: 42) + "="], ["code_challenge": nil],
            ]
            for (index, overrides) in cases.enumerated() {
                let response = try await fixture.authorize(state: "s\(index)", overrides)
                #expect(response.status == 302, "\(overrides)")
                let location = try #require(response.header("Location"))
                #expect(location.hasPrefix(OAuthFixture.redirect + "?"))
                let parameters = queryParameters(location)
                #expect(parameters["error"] == "invalid_request", "\(overrides)")
                #expect(parameters["state"] == "s\(index)")
                #expect(parameters["iss"] == fixture.issuer)
                #expect(parameters["error_description"]?.isEmpty == false)
            }
            // None of them was recorded: a correct request with the same state succeeds.
            let accepted = try await fixture.authorize(state: "s0")
            #expect(accepted.header("Location")?.hasPrefix(OAuthFixture.loginURL) == true)
            #expect(queryParameters(try await fixture.authorize(state: "s0").header("Location") ?? "")["error"] == "invalid_request")
        }
    }

    @Test("state is required, bounded, and a state already pending is refused until it expires", arguments: Backend.allCases)
    func stateRules(backend: Backend) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(backend: backend, now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let missing = try await fixture.authorize(["state": nil])
            #expect(queryParameters(missing.header("Location") ?? "")["error"] == "invalid_request")
            #expect(queryParameters(missing.header("Location") ?? "")["state"] == nil)
            let long = try await fixture.authorize(state: String(repeating: "x", count: 513))
            #expect(queryParameters(long.header("Location") ?? "")["error"] == "invalid_request")

            #expect(try await fixture.authorize(json: true).status == 200)
            let reused = try await fixture.authorize(json: true)
            #expect(reused.status == 400)
            #expect(reused.json["error"] == "invalid_request")
            #expect(reused.json["state"] == "st-123")
            let reusedRedirect = try await fixture.authorize()
            #expect(queryParameters(reusedRedirect.header("Location") ?? "")["error"] == "invalid_request")

            clock.advance(by: 601)
            #expect(try await fixture.authorize(json: true).status == 200)
        }
    }

    @Test("a scope outside the client's allowed scopes is invalid_scope; no scope means openid", arguments: Backend.allCases)
    func scopeRules(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let wide = try await fixture.authorize(["scope": "openid admin"])
            #expect(queryParameters(wide.header("Location") ?? "")["error"] == "invalid_scope")
            #expect(try await fixture.authorize(state: "default-scope", ["scope": nil]).status == 302)
            let redirect = try await fixture.complete(state: "default-scope", accountID: "acct-1")
            #expect(queryParameters(redirect)["code"]?.hasPrefix("ac_") == true)
        }
    }

    @Test("a response_type other than code is unsupported_response_type; repeated parameters are invalid_request", arguments: Backend.allCases)
    func responseTypeAndRepeats(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let token = try await fixture.authorize(["response_type": "token"])
            #expect(queryParameters(token.header("Location") ?? "")["error"] == "unsupported_response_type")
            let repeated = try await herald.request("GET", "/api/oauth/acme/authorize?" + OAuthFixture.authorizeQuery() + "&scope=openid")
            #expect(queryParameters(repeated.header("Location") ?? "")["error"] == "invalid_request")
            let repeatedClient = try await herald.request("GET", "/api/oauth/acme/authorize?" + OAuthFixture.authorizeQuery()
                                                        + "&client_id=\(OAuthFixture.publicClient)")
            #expect(repeatedClient.status == 400)
            #expect(repeatedClient.header("Location") == nil)
        }
    }

    @Test("unknown and disabled realms answer 404", arguments: Backend.allCases)
    func disabledRealm(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let unknown = try await herald.request("GET", "/api/oauth/nowhere/authorize?" + OAuthFixture.authorizeQuery())
            #expect(unknown.status == 404)
            _ = try await herald.admin("PATCH", "/api/admin/realms/acme", json: ["enabled": false])
            let disabled = try await fixture.authorize()
            #expect(disabled.status == 404)
            #expect(disabled.json["code"] == "not_found")
            #expect(try await herald.request("GET", "/api/oauth/acme/.well-known/openid-configuration").status == 404)
        }
    }
}

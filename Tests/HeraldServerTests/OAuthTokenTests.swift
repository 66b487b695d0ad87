import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("OAuth: token endpoint, authorization_code grant")
struct OAuthTokenCodeTests {
    @Test("a public client exchanges its code with the right verifier for tokens and a signed ID token", arguments: Backend.allCases)
    func exchangesCode(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let accountID = try await fixture.account()
            let code = try await fixture.code(accountID: accountID)
            let response = try await fixture.exchange(code)
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Pragma") == "no-cache")
            let body = response.json
            #expect(body["token_type"] == "Bearer")
            #expect(body["expires_in"] == 900)
            #expect(body["refresh_expires_in"] == 2_592_000)
            #expect(body["scope"] == "openid email profile")
            let accessToken = try #require(body["access_token"]?.stringValue)
            #expect(body["refresh_token"]?.stringValue?.isEmpty == false)

            let access = try await fixture.verifiedClaims(accessToken)
            #expect(access["sub"]?.stringValue == accountID)
            #expect(access["client_id"]?.stringValue == OAuthFixture.publicClient)
            #expect(access["iss"]?.stringValue == fixture.issuer)

            let idToken = try await fixture.verifiedClaims(try #require(body["id_token"]?.stringValue))
            #expect(idToken["iss"]?.stringValue == fixture.issuer)
            #expect(idToken["sub"]?.stringValue == accountID)
            #expect(idToken["aud"]?.stringValue == OAuthFixture.publicClient)
            #expect(idToken["nonce"]?.stringValue == "n-0S6_WzA2Mj")
            #expect(idToken["auth_time"] == 1_800_000_000)
            #expect(idToken["email"]?.stringValue == "jane@example.com")
            #expect(idToken["email_verified"] == true)
            #expect(idToken["name"]?.stringValue == "Jane Doe")
            #expect((idToken["exp"]?.doubleValue ?? 0) > (idToken["iat"]?.doubleValue ?? .infinity))
            // Nothing secret reached the logs.
            #expect(!herald.logs.captured.joined(separator: "\n").contains(code))
            #expect(!herald.logs.captured.joined(separator: "\n").contains(accessToken))
        }
    }

    @Test("a JSON body works like a form; without openid there is no ID token", arguments: Backend.allCases)
    func jsonBodyWithoutOpenID(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account(), ["scope": "email"])
            let response = try await herald.request("POST", "/api/oauth/acme/token", headers: [("Content-Type", "application/json")],
                                                    body: Array(try JSONEncoder().encode(JSONValue.object([
                                                        "grant_type": "authorization_code", "code": .string(code),
                                                        "redirect_uri": .string(OAuthFixture.redirect),
                                                        "client_id": .string(OAuthFixture.publicClient),
                                                        "code_verifier": .string(OAuthFixture.verifier)]))))
            #expect(response.status == 200, "\(response.text)")
            #expect(response.json["scope"] == "email")
            #expect(response.json["id_token"] == nil)
        }
    }

    @Test("a wrong verifier is invalid_grant and burns the code", arguments: Backend.allCases)
    func wrongVerifier(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            let wrong = try await fixture.exchange(code, verifier: String(repeating: "A", count: 43))
            #expect(wrong.status == 400)
            #expect(wrong.json["error"] == "invalid_grant")
            #expect(wrong.json["error_description"]?.stringValue?.isEmpty == false)
            #expect(wrong.header("Cache-Control") == "no-store")
            let right = try await fixture.exchange(code)
            #expect(right.json["error"] == "invalid_grant")
        }
    }

    @Test("a malformed verifier is invalid_request; missing parameters and grant types are named", arguments: Backend.allCases)
    func malformedRequests(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            for verifier in ["short", String(repeating: "a", count: 129), String(repeating: "a", count: 42) + "+"] {
                let response = try await fixture.exchange(code, verifier: verifier)
                #expect(response.status == 400)
                #expect(response.json["error"] == "invalid_request", "\(verifier)")
            }
            let client = ("client_id", OAuthFixture.publicClient)
            #expect(try await fixture.post("token", [client]).json["error"] == "invalid_request")
            #expect(try await fixture.post("token", [client, ("grant_type", "password")]).json["error"] == "unsupported_grant_type")
            #expect(try await fixture.post("token", [client, ("grant_type", "authorization_code")]).json["error"] == "invalid_request")
            let repeated = try await fixture.post("token", [client, client, ("grant_type", "authorization_code")])
            #expect(repeated.json["error"] == "invalid_request")
            // Still usable: malformed requests did not touch the code.
            #expect(try await fixture.exchange(code).status == 200)
        }
    }

    @Test("a reused code is invalid_grant and revokes the session its first use started", arguments: Backend.allCases)
    func reusedCodeRevokesSession(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            let first = try await fixture.exchange(code)
            #expect(first.status == 200)
            let accessToken = try #require(first.json["access_token"]?.stringValue)
            let refreshToken = try #require(first.json["refresh_token"]?.stringValue)
            #expect(try await fixture.userinfo(accessToken).status == 200)

            let second = try await fixture.exchange(code)
            #expect(second.status == 400)
            #expect(second.json["error"] == "invalid_grant")
            #expect(second.json["access_token"] == nil)

            #expect(try await fixture.userinfo(accessToken).status == 401)
            let refreshed = try await fixture.post("token", [("grant_type", "refresh_token"), ("refresh_token", refreshToken),
                                                             ("client_id", OAuthFixture.publicClient)])
            #expect(refreshed.json["error"] == "invalid_grant")
        }
    }

    @Test("a redirect URI other than the authorization request's is invalid_grant", arguments: Backend.allCases)
    func mismatchedRedirect(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            let response = try await fixture.exchange(code, redirect: "https://app.acme.example/q?x=1")
            #expect(response.status == 400)
            #expect(response.json["error"] == "invalid_grant")
        }
    }

    @Test("a code older than 60 seconds is invalid_grant", arguments: Backend.allCases)
    func expiredCode(backend: Backend) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(backend: backend, now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let accountID = try await fixture.account()
            let fresh = try await fixture.code(accountID: accountID)
            clock.advance(by: 59)
            #expect(try await fixture.exchange(fresh).status == 200)
            let stale = try await fixture.code(accountID: accountID)
            clock.advance(by: 60)
            let response = try await fixture.exchange(stale)
            #expect(response.status == 400)
            #expect(response.json["error"] == "invalid_grant")
        }
    }

    @Test("another client's code is invalid_grant and stays usable by its own client", arguments: Backend.allCases)
    func codeOfAnotherClient(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let code = try await fixture.code(accountID: try await fixture.account())
            let stolen = try await fixture.exchange(code, redirect: OAuthFixture.redirect,
                                                    basic: (OAuthFixture.otherClient, fixture.otherSecret))
            #expect(stolen.status == 400)
            #expect(stolen.json["error"] == "invalid_grant")
            #expect(try await fixture.exchange(code).status == 200)
        }
    }
}

@Suite("OAuth: token endpoint, client authentication")
struct OAuthClientAuthenticationTests {
    @Test("a confidential client authenticates with client_secret_basic or client_secret_post", arguments: Backend.allCases)
    func basicAndPost(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let accountID = try await fixture.account()
            let client = OAuthFixture.confidentialClient
            let basicCode = try await fixture.code(client: client, accountID: accountID)
            let basic = try await fixture.exchange(basicCode, client: client, basic: (client, fixture.secret))
            #expect(basic.status == 200, "\(basic.text)")

            let postCode = try await fixture.code(client: client, accountID: accountID)
            let post = try await fixture.post("token", [
                ("grant_type", "authorization_code"), ("code", postCode), ("redirect_uri", OAuthFixture.redirect),
                ("code_verifier", OAuthFixture.verifier), ("client_id", client), ("client_secret", fixture.secret)])
            #expect(post.status == 200, "\(post.text)")
        }
    }

    @Test("a confidential client without or with a wrong secret gets 401 invalid_client with a Basic challenge", arguments: Backend.allCases)
    func missingOrWrongSecret(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let client = OAuthFixture.confidentialClient
            let code = try await fixture.code(client: client, accountID: try await fixture.account())
            let attempts = [
                try await fixture.exchange(code, client: client),
                try await fixture.exchange(code, client: client, basic: (client, "wrong-secret")),
                try await fixture.exchange(code, client: client, basic: (client, fixture.otherSecret)),
                try await fixture.exchange(code, client: client, basic: ("nobody", fixture.secret)),
            ]
            for response in attempts {
                #expect(response.status == 401)
                #expect(response.json["error"] == "invalid_client")
                #expect(response.header("WWW-Authenticate") == #"Basic realm="acme""#)
            }
            // Failed authentication did not burn the code.
            #expect(try await fixture.exchange(code, client: client, basic: (client, fixture.secret)).status == 200)
            #expect(!herald.logs.captured.joined(separator: "\n").contains(fixture.secret))
        }
    }

    @Test("mixing Basic and a body secret is invalid_request; a malformed Basic header is invalid_client", arguments: Backend.allCases)
    func mixedMethods(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let client = OAuthFixture.confidentialClient
            let mixed = try await fixture.post("token", [("grant_type", "refresh_token"), ("refresh_token", "x"),
                                                         ("client_secret", fixture.secret)], basic: (client, fixture.secret))
            #expect(mixed.json["error"] == "invalid_request")
            let malformed = try await herald.request("POST", "/api/oauth/acme/token", headers: [
                ("Authorization", "Basic !!!"), ("Content-Type", "application/x-www-form-urlencoded")],
                body: Array("grant_type=refresh_token&refresh_token=x".utf8))
            #expect(malformed.status == 401)
            #expect(malformed.json["error"] == "invalid_client")
        }
    }
}

import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Tokens from a full code exchange for the public client.
private func issueTokens(_ fixture: OAuthFixture, scope: String = "openid email profile",
                         client: String = OAuthFixture.publicClient,
                         basic: (String, String)? = nil,
                         email: String = "jane@example.com") async throws -> (access: String, refresh: String) {
    let code = try await fixture.code(client: client, accountID: try await fixture.account(email: email), ["scope": scope])
    let response = try await fixture.exchange(code, client: client, basic: basic)
    guard response.status == 200, let access = response.json["access_token"]?.stringValue,
          let refresh = response.json["refresh_token"]?.stringValue else {
        throw TestClientError("exchange: \(response.status) \(response.text)")
    }
    return (access, refresh)
}

@Suite("OAuth: refresh_token grant")
struct OAuthRefreshTests {
    @Test("refresh rotates the token, may narrow the scope, refuses a wider one, and a replay revokes the family", arguments: Backend.allCases)
    func rotationAndNarrowing(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture, scope: "openid email")
            func refresh(_ token: String, scope: String? = nil) async throws -> TestHTTPClient.Response {
                var form = [("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", OAuthFixture.publicClient)]
                if let scope { form.append(("scope", scope)) }
                return try await fixture.post("token", form)
            }
            let wider = try await refresh(tokens.refresh, scope: "openid email profile")
            #expect(wider.status == 400)
            #expect(wider.json["error"] == "invalid_scope")

            let narrowed = try await refresh(tokens.refresh, scope: "email")
            #expect(narrowed.status == 200, "\(narrowed.text)")
            #expect(narrowed.json["scope"] == "email")
            #expect(narrowed.json["id_token"] == nil)
            #expect(narrowed.header("Cache-Control") == "no-store")
            let rotated = try #require(narrowed.json["refresh_token"]?.stringValue)
            #expect(rotated != tokens.refresh)
            let newAccess = try #require(narrowed.json["access_token"]?.stringValue)

            let replay = try await refresh(tokens.refresh)
            #expect(replay.json["error"] == "invalid_grant")
            #expect(try await refresh(rotated).json["error"] == "invalid_grant")
            #expect(try await fixture.userinfo(newAccess).status == 401)
        }
    }

    @Test("a refresh token presented by another client is invalid_grant", arguments: Backend.allCases)
    func otherClient(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture)
            let response = try await fixture.post("token", [("grant_type", "refresh_token"), ("refresh_token", tokens.refresh)],
                                                  basic: (OAuthFixture.otherClient, fixture.otherSecret))
            #expect(response.json["error"] == "invalid_grant")
        }
    }
}

@Suite("OAuth: userinfo")
struct OAuthUserinfoTests {
    @Test("userinfo answers sub always, email with the email scope and name with profile, by GET and POST", arguments: Backend.allCases)
    func claimsByScope(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let full = try await issueTokens(fixture)
            let response = try await fixture.userinfo(full.access)
            #expect(response.status == 200)
            #expect(response.json["sub"]?.stringValue?.isEmpty == false)
            #expect(response.json["email"] == "jane@example.com")
            #expect(response.json["email_verified"] == true)
            #expect(response.json["name"] == "Jane Doe")
            let post = try await fixture.post("userinfo", [], bearer: full.access)
            #expect(post.status == 200)
            #expect(post.json["sub"] == response.json["sub"])

            let openIDOnly = try await issueTokens(fixture, scope: "openid", email: "john@example.com")
            let minimal = try await fixture.userinfo(openIDOnly.access)
            #expect(minimal.status == 200)
            #expect(Set(minimal.json.keys) == ["sub"])
        }
    }

    @Test("a missing, malformed, foreign or revoked token gets 401 with a Bearer challenge", arguments: Backend.allCases)
    func badTokens(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture)
            let missing = try await herald.request("GET", "/api/oauth/acme/userinfo")
            #expect(missing.status == 401)
            #expect(missing.header("WWW-Authenticate") == #"Bearer realm="acme""#)
            let garbage = try await fixture.userinfo("not.a.token")
            #expect(garbage.status == 401)
            #expect(garbage.header("WWW-Authenticate") == #"Bearer realm="acme", error="invalid_token""#)
            #expect(garbage.json["error"] == "invalid_token")

            try await herald.createRealm("other")
            let foreign = try await herald.request("GET", "/api/oauth/other/userinfo",
                                                   headers: [("Authorization", "Bearer \(tokens.access)")])
            #expect(foreign.status == 401)

            let revoked = try await fixture.post("revoke", [("token", tokens.refresh), ("client_id", OAuthFixture.publicClient)])
            #expect(revoked.status == 200)
            let after = try await fixture.userinfo(tokens.access)
            #expect(after.status == 401)
            #expect(after.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)
        }
    }
}

extension OAuthUserinfoTests {
    @Test("an access token in a form-encoded POST body works like the Authorization header", arguments: Backend.allCases)
    func formBodyToken(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture)
            let byHeader = try await fixture.userinfo(tokens.access)
            #expect(byHeader.status == 200)
            let byBody = try await fixture.post("userinfo", [("access_token", tokens.access)])
            #expect(byBody.status == 200)
            #expect(byBody.json == byHeader.json)
            #expect(byBody.header("Cache-Control") == "no-store")
            let withCharset = try await herald.request(
                "POST", "/api/oauth/acme/userinfo",
                headers: [("Content-Type", "application/x-www-form-urlencoded; charset=UTF-8")],
                body: Array("scope=openid&access_token=\(tokens.access)".utf8))
            #expect(withCharset.status == 200)
            #expect(withCharset.json["sub"] == byHeader.json["sub"])

            // A bad or revoked token in the body is refused like one in the header.
            let garbage = try await fixture.post("userinfo", [("access_token", "not.a.token")])
            #expect(garbage.status == 401)
            #expect(garbage.header("WWW-Authenticate") == #"Bearer realm="acme", error="invalid_token""#)
            #expect(garbage.json["error"] == "invalid_token")
            let revoked = try await fixture.post("revoke", [("token", tokens.refresh), ("client_id", OAuthFixture.publicClient)])
            #expect(revoked.status == 200)
            let afterRevoke = try await fixture.post("userinfo", [("access_token", tokens.access)])
            #expect(afterRevoke.status == 401)
            #expect(afterRevoke.json["error"] == "invalid_token")
            #expect(!herald.logs.captured.joined().contains(tokens.access))
        }
    }

    @Test("a token sent both in the header and in the body is 400 invalid_request; other carriers are not methods",
          arguments: Backend.allCases)
    func tokenMethods(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture)
            let both = try await fixture.post("userinfo", [("access_token", tokens.access)], bearer: tokens.access)
            #expect(both.status == 400)
            #expect(both.header("WWW-Authenticate") == #"Bearer realm="acme", error="invalid_request""#)
            #expect(both.json["error"] == "invalid_request")
            #expect(both.text.contains(tokens.access) == false)
            // An empty Bearer header still uses the header method.
            let emptyHeader = try await fixture.post("userinfo", [("access_token", tokens.access)], bearer: "")
            #expect(emptyHeader.status == 400)
            let repeated = try await fixture.post("userinfo", [("access_token", tokens.access), ("access_token", tokens.access)])
            #expect(repeated.status == 400)
            #expect(repeated.json["error"] == "invalid_request")
            let malformed = try await herald.request("POST", "/api/oauth/acme/userinfo",
                                                     headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                     body: Array("access_token=%ZZ".utf8))
            #expect(malformed.status == 400)
            #expect(malformed.header("WWW-Authenticate") == #"Bearer realm="acme", error="invalid_request""#)

            // RFC 6750 §2.2: no body method for GET, nor for a JSON body; such a request has no token.
            let getWithBody = try await herald.request("GET", "/api/oauth/acme/userinfo",
                                                       headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                       body: Array("access_token=\(tokens.access)".utf8))
            #expect(getWithBody.status == 401)
            #expect(getWithBody.header("WWW-Authenticate") == #"Bearer realm="acme""#)
            let json = try await herald.request("POST", "/api/oauth/acme/userinfo",
                                                headers: [("Content-Type", "application/json")],
                                                body: Array("{\"access_token\":\"\(tokens.access)\"}".utf8))
            #expect(json.status == 401)
            #expect(json.header("WWW-Authenticate") == #"Bearer realm="acme""#)
            // A form body without access_token leaves the header as the one method.
            let headerWithForm = try await fixture.post("userinfo", [("scope", "openid")], bearer: tokens.access)
            #expect(headerWithForm.status == 200)
            #expect(!herald.logs.captured.joined().contains(tokens.access))
        }
    }
}

@Suite("OAuth: revoke and introspect")
struct OAuthRevokeIntrospectTests {
    @Test("revoking an access token ends its session; unknown tokens and other clients' tokens still answer 200", arguments: Backend.allCases)
    func revoke(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture)
            let unknown = try await fixture.post("revoke", [("token", "nonsense"), ("client_id", OAuthFixture.publicClient)])
            #expect(unknown.status == 200)
            // Another client may not revoke this client's session.
            let foreign = try await fixture.post("revoke", [("token", tokens.access), ("token_type_hint", "access_token")],
                                                 basic: (OAuthFixture.otherClient, fixture.otherSecret))
            #expect(foreign.status == 200)
            #expect(try await fixture.userinfo(tokens.access).status == 200)

            let own = try await fixture.post("revoke", [("token", tokens.access), ("client_id", OAuthFixture.publicClient)])
            #expect(own.status == 200)
            #expect(try await fixture.userinfo(tokens.access).status == 401)
            let refreshed = try await fixture.post("token", [("grant_type", "refresh_token"), ("refresh_token", tokens.refresh),
                                                             ("client_id", OAuthFixture.publicClient)])
            #expect(refreshed.json["error"] == "invalid_grant")
        }
    }

    @Test("revoke requires valid client authentication and a token", arguments: Backend.allCases)
    func revokeAuthentication(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let wrong = try await fixture.post("revoke", [("token", "x")], basic: (OAuthFixture.confidentialClient, "wrong"))
            #expect(wrong.status == 401)
            #expect(wrong.json["error"] == "invalid_client")
            let noToken = try await fixture.post("revoke", [("client_id", OAuthFixture.publicClient)])
            #expect(noToken.status == 400)
            #expect(noToken.json["error"] == "invalid_request")
        }
    }

    @Test("introspection shows active tokens with their claims and inactive ones after revocation", arguments: Backend.allCases)
    func introspect(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture)
            let introspector = (OAuthFixture.otherClient, fixture.otherSecret)
            let access = try await fixture.post("introspect", [("token", tokens.access)], basic: introspector)
            #expect(access.status == 200)
            #expect(access.header("Cache-Control") == "no-store")
            #expect(access.json["active"] == true)
            #expect(access.json["client_id"] == .string(OAuthFixture.publicClient))
            #expect(access.json["aud"] == .string(OAuthFixture.publicClient))
            #expect(access.json["scope"] == "openid email profile")
            #expect(access.json["token_type"] == "Bearer")
            #expect(access.json["iss"]?.stringValue == fixture.issuer)
            #expect(access.json["sub"]?.stringValue?.isEmpty == false)
            #expect(access.json["sid"]?.stringValue?.isEmpty == false)
            #expect(access.json["exp"] != nil && access.json["iat"] != nil)

            let refresh = try await fixture.post("introspect", [("token", tokens.refresh), ("token_type_hint", "refresh_token"),
                                                                ("client_id", OAuthFixture.otherClient),
                                                                ("client_secret", fixture.otherSecret)])
            #expect(refresh.json["active"] == true)
            #expect(refresh.json["sid"] == access.json["sid"])
            #expect(refresh.json["sub"] == access.json["sub"])

            for token in ["garbage", "a.b.c", ""] where !token.isEmpty {
                #expect(try await fixture.post("introspect", [("token", token)], basic: introspector).json == ["active": false])
            }
            _ = try await fixture.post("revoke", [("token", tokens.refresh), ("client_id", OAuthFixture.publicClient)])
            #expect(try await fixture.post("introspect", [("token", tokens.access)], basic: introspector).json == ["active": false])
            #expect(try await fixture.post("introspect", [("token", tokens.refresh)], basic: introspector).json == ["active": false])
        }
    }

    @Test("introspection needs a confidential client of the realm; a foreign realm's token is inactive", arguments: Backend.allCases)
    func introspectAuthentication(backend: Backend) async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000))
        try await RunningHerald.with(backend: backend, now: clock.closure) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await issueTokens(fixture)
            let publicClient = try await fixture.post("introspect", [("token", tokens.access), ("client_id", OAuthFixture.publicClient)])
            #expect(publicClient.status == 401)
            #expect(publicClient.json["error"] == "invalid_client")
            let wrong = try await fixture.post("introspect", [("token", tokens.access)],
                                               basic: (OAuthFixture.otherClient, fixture.secret))
            #expect(wrong.status == 401)

            try await herald.createRealm("other")
            let otherSecret = try await herald.admin("POST", "/api/admin/realms/other/clients", json: [
                "clientId": "rs", "name": "rs", "confidential": true]).json["clientSecret"]?.stringValue ?? ""
            let foreign = try await herald.request("POST", "/api/oauth/other/introspect", headers: [
                ("Content-Type", "application/x-www-form-urlencoded")],
                body: Array("token=\(tokens.access)&client_id=rs&client_secret=\(RedirectURI.encode(otherSecret))".utf8))
            #expect(foreign.status == 200)
            #expect(foreign.json == ["active": false])

            clock.advance(by: 901)
            let expired = try await fixture.post("introspect", [("token", tokens.access)],
                                                 basic: (OAuthFixture.otherClient, fixture.otherSecret))
            #expect(expired.json == ["active": false])
        }
    }
}

import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// Tokens from a code exchange (Basic auth for the confidential client).
private func exchange(_ fixture: OAuthFixture, client: String, basic: (String, String)? = nil,
                      scope: String = "openid email profile") async throws -> (access: String, refresh: String) {
    let email = "u-\(UUID().uuidString.lowercased())@example.com"
    let code = try await fixture.code(client: client, accountID: try await fixture.account(email: email), ["scope": scope])
    let response = try await fixture.exchange(code, client: client, basic: basic)
    guard response.status == 200, let access = response.json["access_token"]?.stringValue,
          let refresh = response.json["refresh_token"]?.stringValue else {
        throw TestClientError("exchange: \(response.status) \(response.text)")
    }
    return (access, refresh)
}

private func sessionRefresh(_ fixture: OAuthFixture, _ token: String, client: String) async throws -> TestHTTPClient.Response {
    try await fixture.herald.request("POST", "/api/auth/\(OAuthFixture.realm)/session/refresh",
                                     headers: [("Content-Type", "application/json")],
                                     body: JSONValue.object(["refreshToken": .string(token), "clientId": .string(client)]).serialized())
}

private func me(_ fixture: OAuthFixture, _ access: String) async throws -> TestHTTPClient.Response {
    try await fixture.herald.request("GET", "/api/auth/\(OAuthFixture.realm)/me", headers: [("Authorization", "Bearer \(access)")])
}

@Suite("Sessions follow their client (issue #20)")
struct SessionClientBindingTests {
    @Test("a confidential or third-party client's refresh token is refused at the session API, also after a secret rotation, and is not burnt",
          arguments: Backend.allCases)
    func sessionAPIRefusesConfidentialAndThirdPartyClients(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await exchange(fixture, client: OAuthFixture.confidentialClient,
                                            basic: (OAuthFixture.confidentialClient, fixture.secret))
            let refused = try await sessionRefresh(fixture, tokens.refresh, client: OAuthFixture.confidentialClient)
            #expect(refused.status == 403)
            #expect(refused.json["code"] == "client_not_allowed")
            _ = try await herald.admin("POST", "/api/admin/realms/acme/clients/\(OAuthFixture.confidentialClient)/secret")
            #expect(try await sessionRefresh(fixture, tokens.refresh, client: OAuthFixture.confidentialClient).status == 403)
            // A public third-party client is not served either.
            let spa = try await exchange(fixture, client: OAuthFixture.publicClient)
            #expect(try await sessionRefresh(fixture, spa.refresh, client: OAuthFixture.publicClient).status == 403)
            // The refusals changed nothing: the public client's token still refreshes at /token.
            let ok = try await fixture.post("token", [("grant_type", "refresh_token"), ("refresh_token", spa.refresh),
                                                      ("client_id", OAuthFixture.publicClient)])
            #expect(ok.status == 200)
        }
    }

    @Test("me refuses a third-party token (403 client_not_allowed) while userinfo gives it only sub", arguments: Backend.allCases)
    func meServesFirstPartyTokensOnly(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let tokens = try await exchange(fixture, client: OAuthFixture.publicClient, scope: "openid")
            let response = try await me(fixture, tokens.access)
            #expect(response.status == 403)
            #expect(response.json["code"] == "client_not_allowed")
            #expect(!response.text.contains("@example.com"))
            let info = try await fixture.userinfo(tokens.access)
            #expect(info.status == 200)
            #expect(info.json["email"] == nil)
        }
    }

    @Test("disabling, deleting and re-creating a client, or narrowing its scopes, reaches its live sessions",
          arguments: Backend.allCases)
    func clientChangesReachLiveSessions(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let path = "/api/admin/realms/acme/clients/\(OAuthFixture.publicClient)"
            func refresh(_ token: String) async throws -> TestHTTPClient.Response {
                try await fixture.post("token", [("grant_type", "refresh_token"), ("refresh_token", token),
                                                 ("client_id", OAuthFixture.publicClient)])
            }
            // Narrowing: the next refresh and the live access token get only the current scopes.
            let narrow = try await exchange(fixture, client: OAuthFixture.publicClient)
            #expect(try await herald.admin("PATCH", path, json: ["allowedScopes": ["openid"]]).status == 200)
            #expect(try await fixture.userinfo(narrow.access).json["email"] == nil)
            let narrowed = try await refresh(narrow.refresh)
            #expect(narrowed.status == 200)
            #expect(narrowed.json["scope"] == "openid")
            #expect(try await herald.admin("PATCH", path, json: ["allowedScopes": ["openid", "email", "profile"]]).status == 200)

            // Disabling revokes: enabling again revives nothing.
            let disabled = try await exchange(fixture, client: OAuthFixture.publicClient)
            #expect(try await herald.admin("PATCH", path, json: ["enabled": false]).status == 200)
            #expect(try await fixture.userinfo(disabled.access).status == 401)
            let inactive = try await fixture.post("introspect", [("token", disabled.access)],
                                                  basic: (OAuthFixture.confidentialClient, fixture.secret))
            #expect(inactive.json["active"] == false)
            #expect(try await herald.admin("PATCH", path, json: ["enabled": true]).status == 200)
            #expect(try await refresh(disabled.refresh).json["error"] == "invalid_grant")
            #expect(try await fixture.userinfo(disabled.access).status == 401)

            // Delete + create under the same id: the old registration's tokens stay dead.
            let old = try await exchange(fixture, client: OAuthFixture.publicClient)
            #expect(try await herald.admin("DELETE", path).status == 204)
            #expect(try await herald.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": .string(OAuthFixture.publicClient), "name": "again",
                "redirectUris": [.string(OAuthFixture.redirect)]]).status == 201)
            #expect(try await refresh(old.refresh).json["error"] == "invalid_grant")
            #expect(try await fixture.userinfo(old.access).status == 401)
            let gone = try await fixture.post("introspect", [("token", old.refresh)],
                                              basic: (OAuthFixture.confidentialClient, fixture.secret))
            #expect(gone.json["active"] == false)
        }
    }

    @Test("a client made third-party or confidential after its tokens were issued loses the session API at once",
          arguments: Backend.allCases)
    func clientFlagsReachLiveSessions(backend: Backend) async throws {
        try await RunningHerald.with(backend: backend) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let path = "/api/admin/realms/acme/clients/\(OAuthFixture.publicClient)"
            #expect(try await herald.admin("PATCH", path, json: ["firstParty": true]).status == 200)
            let tokens = try await exchange(fixture, client: OAuthFixture.publicClient)
            #expect(try await me(fixture, tokens.access).status == 200)
            let refreshed = try await sessionRefresh(fixture, tokens.refresh, client: OAuthFixture.publicClient)
            #expect(refreshed.status == 200, "\(refreshed.text)")
            let refresh = try #require(refreshed.json["refreshToken"]?.stringValue)
            let access = try #require(refreshed.json["accessToken"]?.stringValue)

            #expect(try await herald.admin("PATCH", path, json: ["firstParty": false]).status == 200)
            #expect(try await me(fixture, access).json["code"] == "client_not_allowed")
            #expect(try await sessionRefresh(fixture, refresh, client: OAuthFixture.publicClient).json["code"]
                    == "client_not_allowed")

            #expect(try await herald.admin("PATCH", path, json: ["firstParty": true, "confidential": true]).status == 200)
            #expect(try await me(fixture, access).json["code"] == "client_not_allowed")
            #expect(try await sessionRefresh(fixture, refresh, client: OAuthFixture.publicClient).json["code"]
                    == "client_not_allowed")

            // Made public first-party again: the refusals burnt nothing, the same token refreshes.
            #expect(try await herald.admin("PATCH", path, json: ["confidential": false]).status == 200)
            #expect(try await sessionRefresh(fixture, refresh, client: OAuthFixture.publicClient).status == 200)
        }
    }
}

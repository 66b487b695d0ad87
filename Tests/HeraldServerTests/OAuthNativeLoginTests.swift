import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

@Suite("OAuth: authorize → native login branch B → token")
struct OAuthNativeLoginTests {
    /// Apple's fake keys (RSA generation is slow; one set serves the suite).
    static let appleKeys: FakeAppleKeys = try! FakeAppleKeys()

    /// A fixture whose realm trusts a fake Apple on loopback.
    static func with(_ body: (OAuthFixture) async throws -> Void) async throws {
        let apple = try FakeJWKSServer(document: appleKeys.document)
        defer { apple.stop() }
        try await RunningHerald.with(configure: { $0.appleJWKSURL = apple.url.absoluteString }) { herald in
            let fixture = try await OAuthFixture.make(herald)
            let provider = try await herald.admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
                "enabled": true, "clientId": "com.example.herald.web",
                "audiences": [.string(AppleTokenMinter.defaultAudience)]])
            guard provider.status == 200 else { throw TestClientError("apple provider: \(provider.text)") }
            try await body(fixture)
        }
    }

    /// Native login completing the authorization /authorize started with the backend's `state`
    /// (the app presents the handle /authorize returned for it), or presenting `downstreamState`
    /// verbatim when given.
    static func nativeLogin(_ fixture: OAuthFixture, state: String, client: String = OAuthFixture.publicClient,
                            downstreamState: String? = nil,
                            nonce: String = "raw-\(UUID().uuidString)") async throws -> TestHTTPClient.Response {
        let token = AppleTokenMinter(keys: appleKeys, now: Date()).token { spec in
            spec.claims["nonce"] = .string(AppleTokenMinter.nonceClaim(for: nonce))
            spec.claims["email"] = "appleseed@example.com"
        }
        let body = JSONValue.object(["identityToken": .string(token), "clientId": .string(client), "nonce": .string(nonce),
                                     "downstreamState": .string(downstreamState ?? fixture.downstreamState(for: state)),
                                     "fullName": ["givenName": "Johnny", "familyName": "Appleseed"]])
        return try await fixture.herald.request("POST", "/api/oauth/acme/apple/native-login",
                                                headers: [("Content-Type", "application/json")],
                                                body: Array(try JSONEncoder().encode(body)))
    }

    @Test("the app completes the pending authorization with downstreamState; the backend exchanges the code")
    func fullFlow() async throws {
        try await Self.with { fixture in
            #expect(try await fixture.authorize(state: "flow-1", json: true).status == 200)
            let login = try await Self.nativeLogin(fixture, state: "flow-1")
            #expect(login.status == 200, "\(login.text)")
            #expect(login.header("Cache-Control") == "no-store")
            let redirect = try #require(login.json["redirectUri"]?.stringValue)
            #expect(login.json["accessToken"] == nil)
            let parameters = queryParameters(redirect)
            #expect(redirect.hasPrefix(OAuthFixture.redirect + "?"))
            #expect(parameters["state"] == "flow-1")
            #expect(parameters["iss"] == fixture.issuer)
            let code = try #require(parameters["code"])

            let tokens = try await fixture.exchange(code)
            #expect(tokens.status == 200, "\(tokens.text)")
            let idToken = try await fixture.verifiedClaims(try #require(tokens.json["id_token"]?.stringValue))
            #expect(idToken["email"] == "appleseed@example.com")
            #expect(idToken["name"] == "Johnny Appleseed")
            #expect(idToken["nonce"] == "n-0S6_WzA2Mj")

            let again = try await Self.nativeLogin(fixture, state: "flow-1")
            #expect(again.status == 400)
            #expect(again.json["code"] == "invalid_downstream_state")
        }
    }

    @Test("a downstream state of another client or never issued is invalid_downstream_state")
    func refusesForeignState() async throws {
        try await Self.with { fixture in
            #expect(try await fixture.authorize(state: "flow-2", json: true).status == 200)
            let otherClient = try await Self.nativeLogin(fixture, state: "flow-2", client: OAuthFixture.confidentialClient)
            #expect(otherClient.status == 400)
            #expect(otherClient.json["code"] == "invalid_downstream_state")
            let unknown = try await Self.nativeLogin(fixture, state: "never-issued")
            #expect(unknown.status == 400)
            #expect(unknown.json["code"] == "invalid_downstream_state")
            // The refused attempt of another client did not consume it.
            #expect(try await Self.nativeLogin(fixture, state: "flow-2").status == 200)
        }
    }

    @Test("the backend's own state completes nothing: only the handle /authorize returned, stored hashed, does")
    func backendStateIsNoCapability() async throws {
        try await Self.with { fixture in
            #expect(try await fixture.authorize(state: "flow-3", json: true).status == 200)
            let handle = fixture.downstreamState(for: "flow-3")
            #expect(handle.hasPrefix(DownstreamAuthorizations.downstreamStatePrefix) && handle.utf8.count == 46)
            let withBackendState = try await Self.nativeLogin(fixture, state: "flow-3", downstreamState: "flow-3")
            #expect(withBackendState.status == 400)
            #expect(withBackendState.json["code"] == "invalid_downstream_state")

            let stored = try await fixture.herald.application.services.database.read { db in
                try db.query("SELECT state, handle_hash FROM pending_authorizations").map {
                    (state: try $0.string("state"), hash: try $0.bytes("handle_hash"))
                }
            }
            #expect(stored.count == 1 && stored.first?.state == "flow-3")
            #expect(stored.first?.hash == SHA256.hash(Array(handle.utf8)))

            let login = try await Self.nativeLogin(fixture, state: "flow-3")
            #expect(login.status == 200, "\(login.text)")
            #expect(queryParameters(try #require(login.json["redirectUri"]?.stringValue))["state"] == "flow-3")
        }
    }
}

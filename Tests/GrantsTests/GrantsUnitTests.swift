import Foundation
import Grants
import Testing

@Suite("Grants: PKCE, scope, redirect URIs, client credentials")
struct GrantsUnitTests {
    @Test("S256 matches RFC 7636 appendix B and nothing else")
    func pkceVector() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        #expect(PKCE.challenge(for: verifier) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(PKCE.verify(verifier: verifier, challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"))
        #expect(!PKCE.verify(verifier: verifier, challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"))
        // plain (challenge == verifier) never verifies.
        #expect(!PKCE.verify(verifier: verifier, challenge: verifier))
    }

    @Test("verifiers are 43-128 unreserved characters; challenges 43-128 base64url characters")
    func pkceShapes() {
        #expect(PKCE.isValidVerifier(String(repeating: "a", count: 43)))
        #expect(PKCE.isValidVerifier(String(repeating: "~._-", count: 32)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 129)))
        #expect(!PKCE.isValidVerifier(String(repeating: "a", count: 42) + "+"))
        #expect(!PKCE.isValidVerifier(String(repeating: "é", count: 43)))
        #expect(PKCE.isValidChallenge(String(repeating: "A", count: 43)))
        #expect(!PKCE.isValidChallenge(String(repeating: "A", count: 42) + "="))
        #expect(!PKCE.isValidChallenge(String(repeating: "A", count: 42) + "."))
    }

    @Test("scopes split on spaces, drop duplicates and refuse quotes, backslashes and controls")
    func scopes() {
        #expect(Scope.parse("openid  email openid") == ["openid", "email"])
        #expect(Scope.parse("") == [])
        #expect(Scope.parse("open\"id") == nil)
        #expect(Scope.parse("a\\b") == nil)
        #expect(Scope.parse("a\tb") == nil)
    }

    @Test("redirect parameters are percent-encoded and appended after an existing query, before a fragment")
    func redirectURIs() {
        #expect(RedirectURI.appending([("code", "ac_x"), ("state", "a b&c=d/é")], to: "https://a.example/cb")
            == "https://a.example/cb?code=ac_x&state=a%20b%26c%3Dd%2F%C3%A9")
        #expect(RedirectURI.appending([("code", "1")], to: "https://a.example/cb?x=1") == "https://a.example/cb?x=1&code=1")
        #expect(RedirectURI.appending([("code", "1")], to: "https://a.example/cb?") == "https://a.example/cb?code=1")
        #expect(RedirectURI.appending([("code", "1")], to: "myapp:/cb#frag") == "myapp:/cb?code=1#frag")
    }

    @Test("client credentials come from Basic, the body, or client_id alone; mixing is refused")
    func clientCredentials() throws {
        let decoded = (clientID: "my:client", secret: "sécret 1")
        let basic = try ClientCredentials.read(basic: decoded, bodyClientID: nil, bodyClientSecret: nil)
        #expect(basic == ClientCredentials(clientID: "my:client", secret: "sécret 1", method: .basic))
        let post = try ClientCredentials.read(basic: nil, bodyClientID: "c", bodyClientSecret: "s")
        #expect(post.method == .post)
        let none = try ClientCredentials.read(basic: nil, bodyClientID: "c", bodyClientSecret: "")
        #expect(none == ClientCredentials(clientID: "c", secret: nil, method: .none))
        #expect(throws: GrantsError.self) {
            try ClientCredentials.read(basic: decoded, bodyClientID: nil, bodyClientSecret: "s")
        }
        #expect(throws: GrantsError.self) {
            try ClientCredentials.read(basic: decoded, bodyClientID: "other", bodyClientSecret: nil)
        }
        #expect(throws: GrantsError.self) { try ClientCredentials.read(basic: nil, bodyClientID: nil, bodyClientSecret: nil) }
    }
}

@Suite("Grants: Basic credentials of public clients")
struct GrantsPublicBasicTests {
    @Test("Basic with an empty secret names a public client without a secret")
    func emptyBasicSecret() throws {
        let credentials = try ClientCredentials.read(basic: (clientID: "spa", secret: ""), bodyClientID: nil,
                                                     bodyClientSecret: nil)
        #expect(credentials == ClientCredentials(clientID: "spa", secret: nil, method: .basic))
    }
}

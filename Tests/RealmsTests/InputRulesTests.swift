import Testing
@testable import Realms

@Suite("Input rules")
struct InputRulesTests {
    @Test("realm ids are lowercase slugs of at most 63 characters", arguments: [
        ("acme", true), ("a", true), ("0-team", true), ("my-realm-2", true), (String(repeating: "a", count: 63), true),
        ("", false), ("-acme", false), ("Acme", false), ("acme_1", false), ("acme.com", false), ("ac me", false),
        (String(repeating: "a", count: 64), false), ("ünïcode", false),
    ])
    func realmIDs(id: String, valid: Bool) {
        #expect(InputRules.isSlug(id) == valid)
    }

    @Test("redirect URIs: https, loopback http, reverse-domain custom schemes", arguments: [
        "https://app.example.com/callback",
        "https://app.example.com:8443/cb?x=1",
        "http://127.0.0.1:3000/cb",
        "http://localhost/cb",
        "http://[::1]:8080/cb",
        "com.example.app:/oauth/cb",
        "com.example.app://callback",
    ])
    func acceptedRedirectURIs(uri: String) {
        #expect(InputRules.redirectURIProblem(uri) == nil)
    }

    @Test("redirect URIs refused: fragments, plain http, dangerous schemes, relative, spaces", arguments: [
        "https://app.example.com/cb#frag",
        "http://app.example.com/cb",
        "http://192.168.1.10/cb",
        "javascript:alert(1)",
        "data:text/html,hi",
        "file:///etc/passwd",
        "/relative/path",
        "app.example.com/cb",
        "https:///nohost",
        "https://user:pass@app.example.com/cb",
        "https://app.example.com/c b",
        "com.example.app:",
        "",
    ])
    func refusedRedirectURIs(uri: String) {
        #expect(InputRules.redirectURIProblem(uri) != nil)
    }

    @Test("a redirect URI longer than 2048 bytes is refused")
    func longRedirectURI() {
        let uri = "https://app.example.com/" + String(repeating: "a", count: 2048)
        #expect(InputRules.redirectURIProblem(uri) != nil)
    }

    @Test("login URLs must be https or loopback http, without a fragment")
    func loginURLs() {
        #expect(InputRules.loginURLProblem("https://login.example.com/apple?x=1") == nil)
        #expect(InputRules.loginURLProblem("http://localhost:5173/login") == nil)
        #expect(InputRules.loginURLProblem("http://login.example.com/") != nil)
        #expect(InputRules.loginURLProblem("com.example.app:/login") != nil)
        #expect(InputRules.loginURLProblem("https://login.example.com/#x") != nil)
    }

    @Test("Apple identifiers are case-sensitive, without wildcards")
    func appleIdentifiers() {
        #expect(InputRules.appleIdentifierProblem("com.Example.App") == nil)
        #expect(InputRules.appleIdentifierProblem("com.example.*") != nil)
        #expect(InputRules.appleIdentifierProblem("com.example app") != nil)
        #expect(InputRules.appleIdentifierProblem("") != nil)
        #expect(InputRules.appleTenCharacterIDProblem("ABCDE12345") == nil)
        #expect(InputRules.appleTenCharacterIDProblem("abcde12345") != nil)
        #expect(InputRules.appleTenCharacterIDProblem("ABCDE1234") != nil)
    }

    @Test("scope tokens follow RFC 6749 §3.3")
    func scopes() {
        #expect(InputRules.scopeProblem("openid") == nil)
        #expect(InputRules.scopeProblem("read:all") == nil)
        #expect(InputRules.scopeProblem("two words") != nil)
        #expect(InputRules.scopeProblem("quote\"") != nil)
        #expect(InputRules.scopeProblem("") != nil)
    }

    @Test("names must be non-empty, bounded and free of control characters")
    func names() {
        #expect(InputRules.textProblem("Acme Corp") == nil)
        #expect(InputRules.textProblem("   ") != nil)
        #expect(InputRules.textProblem("a\u{0}b") != nil)
        #expect(InputRules.textProblem(String(repeating: "x", count: 201)) != nil)
    }

    @Test("emails need one @ with both sides and no spaces")
    func emails() {
        #expect(InputRules.emailProblem("a@b.c") == nil)
        #expect(InputRules.emailProblem("abc.privaterelay@privaterelay.appleid.com") == nil)
        #expect(InputRules.emailProblem("no-at-sign") != nil)
        #expect(InputRules.emailProblem("a@b@c") != nil)
        #expect(InputRules.emailProblem("a b@c.d") != nil)
        #expect(InputRules.emailProblem("@c.d") != nil)
    }

    @Test("change reasons are bounded to 500 characters")
    func reasons() throws {
        #expect(throws: RealmsError.self) { try ChangeContext(actor: "ops", reason: String(repeating: "r", count: 501)) }
        #expect(throws: RealmsError.self) { try ChangeContext(actor: "ops", reason: "line\nbreak") }
        #expect(try ChangeContext(actor: "ops", reason: String(repeating: "r", count: 500)).reason?.count == 500)
        #expect(try ChangeContext(actor: "ops", reason: "").reason == nil)
    }
}

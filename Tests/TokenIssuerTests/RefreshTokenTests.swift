import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import TokenIssuer

/// Refresh tokens as `selector.verifier` (issue #39): rows keyed by a time-ordered selector,
/// the verifier proven in constant time, and tokens of the old form still working.
@Suite("Refresh tokens")
struct RefreshTokenTests {
    @Test("selectors sort by issue time; a token reads back as itself and nothing else does")
    func format() throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let tokens = (0..<500).map { RefreshToken.make(at: start.addingTimeInterval(Double($0) / 100)) }
        let lookups = tokens.map(\.lookup)
        #expect(lookups == lookups.sorted { $0.lexicographicallyPrecedes($1) }, "not in issue order")
        #expect(tokens.allSatisfy { $0.text.utf8.count == 66 })
        #expect(Set(tokens.map(\.text)).count == tokens.count)
        let token = tokens[0]
        let read = try #require(RefreshToken(presented: token.text))
        #expect(read.lookup == token.lookup && read.verifierHash == token.verifierHash)

        let selector = String(token.text.prefix(22))
        // The last selector character carries 2 unused bits: another letter decodes alike.
        let last = selector.last!
        let sibling = String(selector.dropLast()) + (last == "A" ? "B" : "A")
        if Base64URL.decode(sibling) == Base64URL.decode(selector) {
            #expect(RefreshToken(presented: sibling + String(token.text.dropFirst(22))) == nil, "a non-canonical selector")
        }
        #expect(RefreshToken(presented: selector + ".") == nil, "no verifier")
        #expect(RefreshToken(presented: "abc." + token.text.dropFirst(23)) == nil, "a short selector")
        #expect(RefreshToken(presented: String(repeating: "a", count: 513)) == nil, "over 512 bytes")
        let old = try #require(RefreshToken(presented: "legacy-token-of-43-characters-aaaaaaaaaaaa"))
        #expect(old.verifierHash == nil && old.lookup == SHA256.hash(Array("legacy-token-of-43-characters-aaaaaaaaaaaa".utf8)))
    }

    @Test("a selector with another verifier is no token: refused, nothing rotated or revoked", arguments: Backend.allCases)
    func forgedVerifier(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let tokens = fixture.tokens
        let issued = try await tokens.sessions.startSession(fixture.request(), in: fixture.database)
        let forged = String(issued.refreshToken.prefix(23)) + SecureRandom.token(byteCount: 32)
        await #expect(throws: TokenError(.invalidGrant)) {
            try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                              refreshToken: forged, scope: nil, clientIP: "192.0.2.1")
        }
        #expect(try await tokens.sessions.sessionID(ofRefreshToken: forged, realmID: "acme") == nil)
        #expect(try await tokens.sessions.session(ofRefreshToken: forged, realmID: "acme") == nil)
        // The real token was neither rotated nor revoked by the forgery.
        let next = try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                                     refreshToken: issued.refreshToken, scope: nil, clientIP: "192.0.2.1")
        // A rotated token's selector with a forged verifier is not reuse: the session lives on.
        let forgedOld = String(issued.refreshToken.prefix(23)) + SecureRandom.token(byteCount: 32)
        await #expect(throws: TokenError(.invalidGrant)) {
            try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                              refreshToken: forgedOld, scope: nil, clientIP: "192.0.2.1")
        }
        #expect(try await tokens.accessTokens.validate(next.accessToken, realmID: "acme") != .revoked)
        _ = try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                              refreshToken: next.refreshToken, scope: nil, clientIP: "192.0.2.1")
    }

    @Test("the row holds the selector and the verifier's hash, never the token", arguments: Backend.allCases)
    func storedForm(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let issued = try await fixture.tokens.sessions.startSession(fixture.request(), in: fixture.database)
        let parts = issued.refreshToken.split(separator: ".").map(String.init)
        let row = try #require(try await fixture.database.read { db in
            try db.queryOne("SELECT token_hash, verifier_hash FROM refresh_tokens")
        })
        #expect(try row.bytes("token_hash") == Base64URL.decode(parts[0]))
        #expect(try row.bytes("verifier_hash") == SHA256.hash(Array(parts[1].utf8)))
    }

    @Test("a refresh token issued before the upgrade (SHA-256 of the token, no verifier) still works after it",
          arguments: Backend.allCases)
    func tokenOfBeforeTheUpgrade(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let tokens = fixture.tokens
        let issued = try await tokens.sessions.startSession(fixture.request(), in: fixture.database)
        // The session's token as the code before tokens migration 8 stored it: keyed by SHA-256 of
        // its 43 characters, with the column that migration added left NULL.
        let legacy = SecureRandom.token(byteCount: 32)
        try await fixture.database.write { db in
            try db.execute("DELETE FROM refresh_tokens WHERE session_id = ?", .text(issued.sessionID))
            try db.execute("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)",
                           .blob(SHA256.hash(Array(legacy.utf8))), .text(issued.sessionID), .integer(fixture.clock.now.unixSeconds))
        }
        #expect(try await tokens.sessions.sessionID(ofRefreshToken: legacy, realmID: "acme") == issued.sessionID)
        #expect(try await tokens.sessions.session(ofRefreshToken: legacy, realmID: "acme")?.isActive == true)
        let next = try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                                     refreshToken: legacy, scope: nil, clientIP: "192.0.2.1")
        #expect(next.refreshToken.contains("."), "rotated into the new form")
        #expect(next.sessionID == issued.sessionID)
        // Reuse detection holds across the change of form.
        await #expect(throws: TokenError(.reuseDetected)) {
            try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                              refreshToken: legacy, scope: nil, clientIP: "192.0.2.1")
        }
        #expect(try await tokens.accessTokens.validate(next.accessToken, realmID: "acme") == .revoked)
    }
}

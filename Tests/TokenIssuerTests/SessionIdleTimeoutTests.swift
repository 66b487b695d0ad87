import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Storage
import Testing
@testable import TokenIssuer

@Suite("Session idle timeout and misused tokens (issue #16)")
struct SessionIdleTimeoutTests {
    private func refresh(_ fixture: TokenFixture, _ token: String) async throws(TokenError) -> IssuedTokens {
        try await fixture.tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web), refreshToken: token,
                                         scope: nil, clientIP: "192.0.2.1")
    }

    @Test("a session unused past its idle timeout is idleExpired; rotation moves the deadline; access tokens never outlive it",
          arguments: Backend.allCases)
    func idleTimeoutEndsUnusedSessions(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        var request = fixture.request()
        request.refreshIdleTTL = 300
        let issued = try await fixture.tokens.sessions.startSession(request, in: fixture.database)
        #expect(issued.expiresIn == 300, "capped from 600 by the idle deadline")
        #expect(issued.refreshExpiresIn == 3600, "the absolute lifetime is unchanged")
        var token = issued.refreshToken
        var access = issued.accessToken
        for _ in 0..<2 {
            fixture.clock.advance(by: 299)
            let next = try await refresh(fixture, token)
            token = next.refreshToken
            access = next.accessToken
        }
        fixture.clock.advance(by: 301)
        await #expect(throws: TokenError(.idleExpired)) { try await refresh(fixture, token) }
        #expect(try await fixture.tokens.accessTokens.validate(access, realmID: "acme") == .expired)
        let looked = try await fixture.tokens.sessions.session(ofRefreshToken: token, realmID: "acme")
        #expect(looked?.isActive == false)
        // Not revoked: presenting it again is the same refusal, not reuse.
        await #expect(throws: TokenError(.idleExpired)) { try await refresh(fixture, token) }
    }

    @Test("without an idle timeout only the absolute lifetime ends a session", arguments: Backend.allCases)
    func noIdleTimeoutByDefault(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let issued = try await fixture.tokens.sessions.startSession(fixture.request(), in: fixture.database)
        fixture.clock.advance(by: 3599)
        #expect(try await refresh(fixture, issued.refreshToken).refreshExpiresIn == 1)
    }

    @Test("idle-ended sessions are purged after the retention period", arguments: Backend.allCases)
    func idleEndedSessionsArePurged(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        var request = fixture.request()
        request.refreshTokenTTL = 31_536_000
        request.refreshIdleTTL = 600
        _ = try await fixture.tokens.sessions.startSession(request, in: fixture.database)
        let purge = EndedSessionPurge(database: fixture.database, now: fixture.clock.closure)
        fixture.clock.advance(by: Double(EndedSessionPurge.retentionSeconds))
        #expect(try await purge.run() == 0, "ended 600 s later, so not yet past the retention")
        fixture.clock.advance(by: 601)
        #expect(try await purge.run() == 1)
    }

    @Test("misusedTokenKind names this realm's ID and refresh tokens, and nothing else", arguments: Backend.allCases)
    func misusedTokenKinds(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let tokens = fixture.tokens
        let issued = try await tokens.sessions.startSession(fixture.request(), in: fixture.database)
        let idToken = try #require(issued.idToken)
        #expect(try await tokens.accessTokens.validate(idToken, realmID: "acme") == .invalid)
        #expect(try await tokens.accessTokens.misusedTokenKind(idToken, realmID: "acme") == .idToken)
        #expect(try await tokens.accessTokens.misusedTokenKind(issued.refreshToken, realmID: "acme") == .refreshToken)
        // An access token is not misused; another realm's tokens are not this realm's.
        #expect(try await tokens.accessTokens.misusedTokenKind(issued.accessToken, realmID: "acme") == nil)
        #expect(try await tokens.accessTokens.misusedTokenKind(idToken, realmID: "other") == nil)
        #expect(try await tokens.accessTokens.misusedTokenKind(issued.refreshToken, realmID: "other") == nil)
        // A JWT that only looks like an ID token (its signature broken) is not one.
        var parts = idToken.split(separator: ".").map(String.init)
        parts[2] = String(parts[2].reversed())
        #expect(try await tokens.accessTokens.misusedTokenKind(parts.joined(separator: "."), realmID: "acme") == nil)
        #expect(try await tokens.accessTokens.misusedTokenKind("not-a-token", realmID: "acme") == nil)
    }
}

import Foundation
import Grants
import HeraldTestSupport
import Login
import Realms
import Storage
import Testing
import TokenIssuer

/// The `authorization_code` grant's write (`AuthorizationCodeExchange`) under the stamp of the
/// settings its caller decided on; the token endpoint's answers are in `OAuthTokenTests` and,
/// across nodes, `TwoNodeTests`.
@Suite("Authorization code exchange")
struct AuthorizationCodeExchangeTests {
    private static let verifier = String(repeating: "v", count: 43)

    /// A code issued to `partner` by a branch B login of a new user.
    private func code(_ fixture: LoginFixture, subject: String) async throws -> String {
        let handle = try await fixture.pendingAuthorization(state: "state-\(subject)")
        fixture.identities.verifies("t-\(subject)", subject: subject, audience: "com.example.stub.web")
        let result = try await fixture.login.login(fixture.request("t-\(subject)", clientID: "partner", downstreamState: handle))
        guard case .downstream(let redirectURI) = result.branch else { throw ExchangeTestError.noCode }
        return try #require(LoginFixture.queryParameters(redirectURI)["code"])
    }

    private func realm(_ fixture: LoginFixture) async throws -> Realm {
        try #require(try await RealmStore(database: fixture.database, now: fixture.clock.closure).enabledRealm(LoginFixture.realmID))
    }

    private func exchange(_ fixture: LoginFixture, _ code: String, realm: Realm, stamp: String?)
        async throws -> AuthorizationCodeExchange.Outcome {
        try await AuthorizationCodeExchange(database: fixture.database, codes: AuthorizationCodes(now: fixture.clock.closure),
                                                   sessions: fixture.sessions, now: fixture.clock.closure)
            .exchange(realm: realm, client: fixture.partner, code: code, redirectURI: LoginFixture.partnerRedirectURI,
                      codeVerifier: Self.verifier, clientIP: LoginFixture.clientIP, settingsStamp: stamp)
    }

    private func stamp(_ fixture: LoginFixture) async throws -> String? {
        try await fixture.database.read { db in try RealmSettingsVersion.current(db, realmID: LoginFixture.realmID) }
    }

    @Test("a stamp that changed since the caller read the realm and client refuses with settingsChanged, and the code stays unburnt",
          arguments: Backend.allCases)
    func changedStampLeavesTheCodeUnburnt(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        let code = try await code(fixture, subject: "sub-stamp")
        let realm = try await realm(fixture)
        await #expect(throws: TokenError(.settingsChanged)) {
            _ = try await exchange(fixture, code, realm: realm, stamp: "a-stamp-of-before")
        }
        guard case .issued(let tokens) = try await exchange(fixture, code, realm: realm, stamp: try await stamp(fixture)) else {
            Issue.record("the code was burnt by the refused exchange")
            return
        }
        #expect(!tokens.accessToken.isEmpty)
        // Single use still holds: the code is now spent.
        guard case .replayed = try await exchange(fixture, code, realm: realm, stamp: try await stamp(fixture)) else {
            Issue.record("a second exchange of the code was not a replay")
            return
        }
    }

    @Test("an exchange waits for 2 round trips on PostgreSQL: the stamp, the burn, the code's account and the key in one; the session, its token and the code's session with COMMIT")
    func exchangeRoundTrips() async throws {
        let fixture = try await LoginFixture(.postgres)
        let postgres = try #require(fixture.database as? PostgresDatabase)
        let code = try await code(fixture, subject: "sub-trips")
        let realm = try await realm(fixture), stamp = try await stamp(fixture)
        let before = postgres.roundTrips.total
        guard case .issued = try await exchange(fixture, code, realm: realm, stamp: stamp) else {
            Issue.record("the exchange was refused")
            return
        }
        #expect(postgres.roundTrips.total - before == 2)
    }
}

private enum ExchangeTestError: Error {
    case noCode
}

import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Storage
import Testing
@testable import TokenIssuer

/// A migrated database with realm `acme` (with a signing key), its public client `web` and one
/// active account.
struct TokenFixture {
    let fresh: FreshDatabase
    let clock = TestClock()
    let masterKey = MasterKey.generate()
    let accountID: String
    let web: ClientApp

    init(_ backend: Backend, realmChanges: RealmChanges = RealmChanges()) async throws {
        fresh = try await FreshDatabase(backend, migrations: RealmsSchema.migrations + TokenIssuerSchema.migrations)
        let database = fresh.database
        let ring = SigningKeyRing(database: database, masterKey: masterKey, now: clock.closure)
        let key = try ring.prepareKey(realmID: "acme", algorithm: realmChanges.signingAlgorithm ?? .es256)
        _ = try await RealmStore(database: database, now: clock.closure)
            .create(id: "acme", changes: realmChanges, context: ChangeContext(actor: "test")) { db, _ in
                try ring.activate(key, in: db)
            }
        accountID = try await AccountStore(database: database, sessionRevoker: SessionRevoker(now: clock.closure),
                                            deletionHook: nil, now: clock.closure)
            .create(realmID: "acme", NewAccount(email: "ada@example.com", emailVerified: true,
                                                name: PersonName(givenName: "Ada", familyName: "Lovelace"))).id
        web = try await ClientAppStore(database: database, sessionRevoker: SessionRevoker(now: clock.closure), now: clock.closure)
            .create(realmID: "acme", clientID: "web", changes: ClientAppChanges(name: "Web"),
                    context: ChangeContext(actor: "test")).client
    }

    var database: any Database { fresh.database }

    /// A session store and an access-token verifier sharing one new signer (so one key cache),
    /// as the server wires them.
    var tokens: TokenWiring {
        let signer = TokenSigner(masterKey: masterKey, issuers: RealmIssuers(publicURL: "https://id.example"))
        return TokenWiring(sessions: SessionStore(database: database, signer: signer, now: clock.closure),
                           accessTokens: AccessTokenVerifier(database: database, signer: signer, now: clock.closure))
    }

    func request(scope: [String] = ["openid", "profile", "email"], nonce: String? = "n-1") -> SessionRequest {
        SessionRequest(realmID: "acme", clientID: "web", clientInstanceID: web.instanceID, accountID: accountID, scope: scope, clientIP: "192.0.2.1",
                       authTime: clock.now.unixSeconds, nonce: nonce, accessTokenTTL: 600, refreshTokenTTL: 3600,
                       ipBinding: false)
    }
}

/// TokenIssuer as the server wires it.
struct TokenWiring {
    let sessions: SessionStore
    let accessTokens: AccessTokenVerifier
}

@Suite("Sessions and tokens")
struct SessionStoreTests {
    @Test("an openid session gets an ID token with nonce, auth_time, email and name; the access token has no nonce", arguments: Backend.allCases)
    func idTokenClaims(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let issued = try await fixture.tokens.sessions.startSession(fixture.request(), in: fixture.database)
        let idToken = try #require(issued.idToken)
        let claims = try CompactJWS(parsing: idToken).payloadObject()
        #expect(claims["iss"] == "https://id.example/api/oauth/acme")
        #expect(claims["aud"] == "web")
        #expect(claims["sub"]?.stringValue == fixture.accountID)
        #expect(claims["nonce"] == "n-1")
        #expect(claims["email"] == "ada@example.com")
        #expect(claims["email_verified"] == true)
        #expect(claims["name"] == "Ada Lovelace")
        #expect(claims["auth_time"]?.int64Value == fixture.clock.now.unixSeconds)
        #expect(try CompactJWS(parsing: issued.accessToken).payloadObject()["nonce"] == nil)
        #expect(issued.expiresIn == 600 && issued.refreshExpiresIn == 3600)

        let noOpenID = try await fixture.tokens.sessions.startSession(fixture.request(scope: ["profile"]), in: fixture.database)
        #expect(noOpenID.idToken == nil)
    }

    @Test("a /token refresh's ID token names the account as stored at the refresh, read with the token's row",
          arguments: Backend.allCases)
    func refreshNamesTheAccountAsStored(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let sessions = fixture.tokens.sessions
        let issued = try await sessions.startSession(fixture.request(), in: fixture.database)
        try await fixture.database.write { db in
            try db.execute("""
                UPDATE accounts SET email = 'grace@example.com', email_verified = 0, given_name = 'Grace',
                    family_name = 'Hopper', picture_url = 'https://example.com/g.png' WHERE id = ?
                """, .text(fixture.accountID))
        }
        let refreshed = try await sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                                   refreshToken: issued.refreshToken, scope: nil, clientIP: "192.0.2.1")
        let claims = try CompactJWS(parsing: try #require(refreshed.idToken)).payloadObject()
        #expect(claims["sub"]?.stringValue == fixture.accountID)
        #expect(claims["email"] == "grace@example.com")
        #expect(claims["email_verified"] == false)
        #expect(claims["name"] == "Grace Hopper")
        #expect(claims["picture"] == "https://example.com/g.png")
    }

    @Test("the first-party answer shows the account and signs no ID token; the token endpoint's signs one",
          arguments: Backend.allCases)
    func answerDecidesIDTokenAndProfile(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let sessions = fixture.tokens.sessions
        let request = fixture.request()
        let firstParty = try await fixture.database.write { db in
            try sessions.startSession(in: db, request, answer: .firstParty)
        }
        let issued = try sessions.issue(firstParty)
        #expect(issued.idToken == nil, "openid is granted, but the first-party answer has no field for an ID token")
        #expect(issued.profile?.account.id == fixture.accountID)
        let endpoint = try await fixture.database.write { db in
            try sessions.startSession(in: db, request, answer: .tokenEndpoint)
        }
        let forEndpoint = try sessions.issue(endpoint)
        #expect(forEndpoint.idToken != nil)
        #expect(forEndpoint.profile == nil)
    }

    @Test("the session API's refresh shows the account with its identities as stored, none included; /token's shows none",
          arguments: Backend.allCases)
    func sessionRefreshShowsTheStoredIdentities(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let sessions = fixture.tokens.sessions
        // The session API serves public first-party clients: the fixture's `web` becomes one.
        _ = try await ClientAppStore(database: fixture.database, sessionRevoker: SessionRevoker(now: fixture.clock.closure),
                                     now: fixture.clock.closure)
            .update(realmID: "acme", clientID: "web", changes: ClientAppChanges(firstParty: true),
                    context: ChangeContext(actor: "test"))
        let first = try await sessions.startSession(fixture.request(), in: fixture.database)
        let unlinked = try await sessions.refresh(realmID: "acme", presenter: .sessionAPI(clientID: "web"),
                                                  refreshToken: first.refreshToken, scope: nil, clientIP: "192.0.2.1")
        #expect(unlinked.profile?.account.id == fixture.accountID)
        #expect(unlinked.profile?.identities == [])
        try await fixture.database.write { db in
            for (provider, linkedAt) in [("google", Int64(20)), ("apple", 10)] {
                try AccountStore.link(db, Identity(realmId: "acme", provider: provider, openId: "\(provider)-1",
                                                   accountId: fixture.accountID, email: nil, linkedAt: linkedAt))
            }
        }
        let linked = try await sessions.refresh(realmID: "acme", presenter: .sessionAPI(clientID: "web"),
                                                refreshToken: unlinked.refreshToken, scope: nil, clientIP: "192.0.2.1")
        let stored = try await fixture.database.read { db in
            try AccountStore.identities(db, realmID: "acme", accountID: fixture.accountID)
        }
        #expect(stored.map(\.provider) == ["apple", "google"])
        #expect(linked.profile?.identities == stored)
        let web = try #require(try await fixture.database.read { db in try ClientAppStore.load(db, realmID: "acme", clientID: "web") })
        let endpoint = try await sessions.refresh(realmID: "acme", presenter: .authenticatedClient(web),
                                                  refreshToken: linked.refreshToken, scope: nil, clientIP: "192.0.2.1")
        #expect(endpoint.profile == nil)
    }

    @Test("refresh may narrow the scope but not widen it; a widening attempt does not burn the token", arguments: Backend.allCases)
    func scopeNarrowing(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let tokens = fixture.tokens
        let issued = try await tokens.sessions.startSession(fixture.request(scope: ["openid", "email"]), in: fixture.database)
        await #expect(throws: TokenError(.invalidScope)) {
            try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web), refreshToken: issued.refreshToken,
                                     scope: ["openid", "admin"], clientIP: "192.0.2.1")
        }
        let narrowed = try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web), refreshToken: issued.refreshToken,
                                                scope: ["email"], clientIP: "192.0.2.1")
        #expect(narrowed.scope == ["email"])
        #expect(narrowed.idToken == nil)
        guard case .valid(let claims) = try await tokens.accessTokens.validate(narrowed.accessToken, realmID: "acme") else {
            Issue.record("narrowed access token should be valid")
            return
        }
        #expect(claims.scope == ["email"])
        #expect(claims.sessionID == issued.sessionID)
    }

    @Test("a refresh is 2 round trips on PostgreSQL: its reads with the rotation, then its writes with COMMIT")
    func refreshRoundTrips() async throws {
        let fixture = try await TokenFixture(.postgres)
        let postgres = try #require(fixture.database as? PostgresDatabase)
        let issued = try await fixture.tokens.sessions.startSession(fixture.request(), in: fixture.database)
        let before = postgres.roundTrips.total
        let next = try await fixture.tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web),
                                                             refreshToken: issued.refreshToken, scope: nil, clientIP: "192.0.2.1")
        #expect(postgres.roundTrips.total - before == 2)
        #expect(next.sessionID == issued.sessionID)
    }

    @Test("a reused refresh token revokes its family; the session id of a refresh token is found for /revoke", arguments: Backend.allCases)
    func reuseRevokesFamily(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let tokens = fixture.tokens
        let issued = try await tokens.sessions.startSession(fixture.request(), in: fixture.database)
        #expect(try await tokens.sessions.sessionID(ofRefreshToken: issued.refreshToken, realmID: "acme") == issued.sessionID)
        #expect(try await tokens.sessions.sessionID(ofRefreshToken: issued.refreshToken, realmID: "other") == nil)
        let next = try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web), refreshToken: issued.refreshToken,
                                            scope: nil, clientIP: "192.0.2.1")
        await #expect(throws: TokenError(.reuseDetected)) {
            try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web), refreshToken: issued.refreshToken, scope: nil,
                                     clientIP: "192.0.2.1")
        }
        await #expect(throws: TokenError(.revoked)) {
            try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web), refreshToken: next.refreshToken, scope: nil,
                                     clientIP: "192.0.2.1")
        }
        #expect(try await tokens.accessTokens.validate(next.accessToken, realmID: "acme") == .revoked)
        await #expect(throws: TokenError(.clientMismatch)) {
            let other = try await tokens.sessions.startSession(fixture.request(), in: fixture.database)
            _ = try await tokens.sessions.refresh(realmID: "acme", presenter: .sessionAPI(clientID: "other-client"), refreshToken: other.refreshToken,
                                         scope: nil, clientIP: "192.0.2.1")
        }
    }

    @Test("access tokens expire with the clock; a session cannot outlive its absolute expiry", arguments: Backend.allCases)
    func expiry(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let tokens = fixture.tokens
        let issued = try await tokens.sessions.startSession(fixture.request(), in: fixture.database)
        fixture.clock.advance(by: 601)
        #expect(try await tokens.accessTokens.validate(issued.accessToken, realmID: "acme") == .expired)
        fixture.clock.advance(by: 3000)
        await #expect(throws: TokenError(.expired)) {
            try await tokens.sessions.refresh(realmID: "acme", presenter: .authenticatedClient(fixture.web), refreshToken: issued.refreshToken, scope: nil,
                                     clientIP: "192.0.2.1")
        }
    }

    @Test("a retired key stays published for the longest token lifetime of the realm and its clients, plus leeway", arguments: Backend.allCases)
    func retentionFollowsTokenLifetimes(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend, realmChanges: RealmChanges(accessTokenTTL: 7200))
        let ring = SigningKeyRing(database: fixture.database, masterKey: fixture.masterKey, now: fixture.clock.closure)
        _ = try await ring.rotate(realmID: "acme", context: ChangeContext(actor: "test"))
        var retired = try #require(try await ring.keys(realmID: "acme").last)
        #expect(retired.publishUntil == (retired.retiredAt ?? 0) + 7200 + SigningKeyRing.retentionLeeway)

        _ = try await ClientAppStore(database: fixture.database, sessionRevoker: SessionRevoker(now: fixture.clock.closure),
                                     now: fixture.clock.closure)
            .create(realmID: "acme", clientID: "slow", changes: ClientAppChanges(name: "Slow", accessTokenTTL: 86_400),
                    context: ChangeContext(actor: "test"))
        _ = try await ring.rotate(realmID: "acme", context: ChangeContext(actor: "test"))
        retired = try #require(try await ring.keys(realmID: "acme").first { $0.status == "retired" && $0.publishUntil ?? 0 > (retired.publishUntil ?? 0) })
        #expect(retired.publishUntil == (retired.retiredAt ?? 0) + 86_400 + SigningKeyRing.retentionLeeway)
    }

    @Test("an access token verifies only while its key is published: a key past publish_until verifies nothing, even once cached as active",
          arguments: Backend.allCases)
    func unpublishedKeyVerifiesNothing(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let tokens = fixture.tokens
        // Issued with a lifetime longer than the realm's (an operator lowered it afterwards), so
        // the token outlives its key's publication.
        var request = fixture.request()
        request.accessTokenTTL = 86_000
        request.refreshTokenTTL = 90_000
        let issued = try await tokens.sessions.startSession(request, in: fixture.database)
        guard case .valid = try await tokens.accessTokens.validate(issued.accessToken, realmID: "acme") else {
            Issue.record("a fresh token must verify")
            return
        }
        let ring = SigningKeyRing(database: fixture.database, masterKey: fixture.masterKey, now: fixture.clock.closure)
        _ = try await ring.rotate(realmID: "acme", context: ChangeContext(actor: "test"))
        let retired = try #require(try await ring.keys(realmID: "acme").first { $0.status == "retired" })
        let publishUntil = try #require(retired.publishUntil)

        fixture.clock.advance(by: Double(publishUntil - fixture.clock.now.unixSeconds - 1))
        guard case .valid = try await tokens.accessTokens.validate(issued.accessToken, realmID: "acme") else {
            Issue.record("a retired key verifies while it is published")
            return
        }
        fixture.clock.advance(by: 1)
        #expect(try await ring.publishedKeys(realmID: "acme").keys.allSatisfy { $0.kid != retired.kid })
        #expect(try await tokens.accessTokens.validate(issued.accessToken, realmID: "acme") == .invalid)
        // A service that never cached the key refuses it as well.
        #expect(try await fixture.tokens.accessTokens.validate(issued.accessToken, realmID: "acme") == .invalid)
    }

    @Test("a published key whose stored JWK is unreadable fails validation with a storage error, not a quiet invalid (issue #33)",
          arguments: Backend.allCases)
    func unreadablePublishedKeyIsAnError(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let issued = try await fixture.tokens.sessions.startSession(fixture.request(), in: fixture.database)
        // A service that has not cached the key reads its row (the signer's own cache would not).
        #expect(try await fixture.tokens.accessTokens.validate(issued.accessToken, realmID: "acme") != .invalid)
        try await fixture.database.write { db in try db.execute("UPDATE signing_keys SET public_jwk = 'not json'") }
        let error = await #expect(throws: StorageError.self) {
            _ = try await fixture.tokens.accessTokens.validate(issued.accessToken, realmID: "acme")
        }
        #expect(error?.message.contains("public_jwk") == true)
    }
}

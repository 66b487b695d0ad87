import Foundation
import Grants
@testable import HeraldGoogle
import HeraldTestSupport
import JOSE
import Login
import Realms
import Storage
import Testing
import TokenIssuer

/// `IdentityTokenLogin` over the Google verifier, in process: the pipeline claims Google's
/// replay in its transaction and links accounts on Google's `email_verified`.
@Suite("Google login through the Login pipeline")
struct GoogleLoginTests {
    struct Fixture {
        let fresh: FreshDatabase
        let google = FakeGoogle()
        let login: IdentityTokenLogin<GoogleIdentityVerifier>

        init(_ backend: Backend) async throws {
            fresh = try await FreshDatabase(backend, migrations: RealmsSchema.migrations + TokenIssuerSchema.migrations
                + LoginAttemptLimiter.migrations + GrantsSchema.migrations + GoogleReplayStore.migrations)
            let database = fresh.database, now = google.clock.closure
            let masterKey = MasterKey.generate()
            let ring = SigningKeyRing(database: database, masterKey: masterKey, now: now)
            let key = try ring.prepareKey(realmID: "acme", algorithm: .es256)
            _ = try await RealmStore(database: database, now: now)
                .create(id: "acme", changes: RealmChanges(), context: ChangeContext(actor: "test")) { db, _ in
                    try ring.activate(key, in: db)
                }
            _ = try await ClientAppStore(database: database, sessionRevoker: SessionRevoker(now: now), now: now)
                .create(realmID: "acme", clientID: "app", changes: ClientAppChanges(name: "App", firstParty: true),
                        context: ChangeContext(actor: "test"))
            let issuers = RealmIssuers(publicURL: "https://id.example")
            // The realm's Google settings as plain values (their store is Realms', added separately).
            let verifier = GoogleIdentityVerifier(
                jwks: google.keys, replayStore: GoogleReplayStore(),
                requirements: { _, _ in GoogleRealmRequirements(clientIDs: [GoogleTokenMinter.defaultClientID]) },
                now: now)
            login = IdentityTokenLogin(
                database: database, verifier: verifier,
                sessions: SessionStore(database: database, signer: TokenSigner(masterKey: masterKey, issuers: issuers), now: now),
                issuers: issuers, limiter: LoginAttemptLimiter(database: database, now: now),
                downstream: DownstreamAuthorizations(database: database, now: now), now: now)
        }

        func request(_ token: String) -> LoginRequest {
            LoginRequest(realmID: "acme", identityToken: token, clientID: "app", rawNonce: GoogleTokenMinter.defaultNonce,
                         downstreamState: nil, clientIP: "192.0.2.7")
        }

        func account(subject: String) async throws -> Account? {
            try await fresh.database.read { db in
                try AccountStore.load(db, realmID: "acme", provider: "google", openID: subject)
            }
        }

        func refusal(_ token: String) async -> LoginError? {
            do {
                _ = try await login.login(request(token))
                return nil
            } catch {
                return error
            }
        }
    }

    @Test(arguments: Backend.allCases) func loginCreatesAGoogleAccountWithTheTokensNameAndRefusesItsReplay(backend: Backend) async throws {
        let fixture = try await Fixture(backend)
        let token = fixture.google.minter.token()
        let result = try await fixture.login.login(fixture.request(token))
        #expect(result.isNewUser && result.audience == GoogleTokenMinter.defaultClientID)
        let account = try #require(try await fixture.account(subject: GoogleTokenMinter.defaultSubject))
        #expect(account.id == result.accountID)
        #expect(account.email == "ada@example.com" && account.emailVerified)
        #expect(account.name.displayName == "Ada Lovelace")
        let replay = await fixture.refusal(token)
        #expect(replay?.code == .invalidIdentityToken && replay?.providerReason == "replayed")
    }

    @Test(arguments: Backend.allCases) func anUnverifiedEmailNeverLinks(backend: Backend) async throws {
        let fixture = try await Fixture(backend)
        let existing = try await AccountStore(database: fixture.fresh.database,
                                              sessionRevoker: SessionRevoker(now: fixture.google.clock.closure),
                                              deletionHook: nil, now: fixture.google.clock.closure)
            .create(realmID: "acme", NewAccount(email: "ada@example.com", emailVerified: true))
        let token = fixture.google.minter.token { $0.claims["email_verified"] = .bool(false) }
        let result = try await fixture.login.login(fixture.request(token))
        #expect(result.isNewUser && result.accountID != existing.id)
        #expect(try await fixture.account(subject: GoogleTokenMinter.defaultSubject)?.emailVerified == false)
    }

    @Test(arguments: Backend.allCases) func aRefusedTokenCarriesItsReason(backend: Backend) async throws {
        let fixture = try await Fixture(backend)
        let refusal = await fixture.refusal(fixture.google.minter.token { $0.claims["azp"] = "someone-else" })
        #expect(refusal?.code == .invalidIdentityToken && refusal?.providerReason == "azp")
    }
}

import Foundation
import HeraldTestSupport
import Login
import Realms
import Testing

/// `IdentityTokenLogin` in process, over the stub provider: what each refusal answers, what it
/// counts against the (realm, client IP) limit and what it leaves unchanged.
@Suite("Login pipeline: refusals, outages and the failure limit")
struct IdentityTokenLoginRefusalTests {
    @Test("each verifier refusal is invalidIdentityToken with the verifier's reason, counted and recorded",
          arguments: Backend.allCases)
    func verifierRefusalsCount(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        let reasons = ["audience", "signature", "expired", "nonce_mismatch"]
        for reason in reasons {
            fixture.identities.refuses("t-\(reason)", reason: reason)
            #expect(await fixture.refusal(of: fixture.request("t-\(reason)"))
                == LoginError(.invalidIdentityToken, providerReason: reason))
        }
        // The provider's own size limit is the pipeline's `tokenTooLarge`, and counts too.
        fixture.identities.findsTooLarge("t-large")
        #expect(await fixture.refusal(of: fixture.request("t-large")) == LoginError(.tokenTooLarge))

        #expect(try await fixture.countedFailures() == Int64(reasons.count + 1))
        let failed = try await fixture.events(.loginFailed)
        #expect(failed.map(\.reason) == ["token_too_large"] + reasons.reversed())
        // The client was found before verification, so the events name it.
        #expect(failed.allSatisfy { $0.clientId == "app" && $0.clientIp == LoginFixture.clientIP })
        #expect(try await fixture.accountCount() == 0)
    }

    @Test("a token over the pipeline's size limit is refused before the provider sees it", arguments: Backend.allCases)
    func oversizedTokenNeverReachesVerifier(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        let huge = String(repeating: "x", count: StubVerifier.maximumTokenBytes + 1)
        fixture.identities.verifies(huge, subject: "sub-huge")
        #expect(await fixture.refusal(of: fixture.request(huge)) == LoginError(.tokenTooLarge))
        #expect(fixture.identities.verificationCount == 0)
        #expect(try await fixture.countedFailures() == 1)
    }

    @Test("a provider outage answers providerUnavailable with its retry, counts nothing and changes nothing",
          arguments: Backend.allCases)
    func providerOutageChangesNothing(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend, realm: RealmChanges(failuresPerWindow: 1, windowSeconds: 300))
        fixture.identities.isUnavailable(for: "t-down", retryAfterSeconds: 30)
        for _ in 1...3 {
            let error = await fixture.refusal(of: fixture.request("t-down"))
            #expect(error == LoginError(.providerUnavailable, providerReason: "stub_unavailable", retryAfterSeconds: 30))
        }
        #expect(try await fixture.countedFailures() == 0)
        #expect(try await fixture.events(.loginFailed).isEmpty)
        #expect(try await fixture.accountCount() == 0)
        // Three outages under a limit of one failure: the next real login is not blocked.
        fixture.identities.verifies("t-up", subject: "sub-up")
        #expect(try await fixture.login.login(fixture.request("t-up")).isNewUser)
    }

    @Test("the same token is accepted once: its second use is refused as replayed and counted", arguments: Backend.allCases)
    func replayIsRefused(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        fixture.identities.verifies("t-once", subject: "sub-once")
        let first = try await fixture.login.login(fixture.request("t-once"))
        let replay = await fixture.refusal(of: fixture.request("t-once"))
        #expect(replay == LoginError(.invalidIdentityToken, providerReason: LoginError.replayedReason))
        #expect(try await fixture.countedFailures() == 1)
        #expect(try await fixture.events(.loginSucceeded).count == 1)
        #expect(try await fixture.account(subject: "sub-once")?.id == first.accountID)
    }

    @Test("after N counted failures the (realm, IP) is refused as rateLimited, claiming nothing, until the window ends",
          arguments: Backend.allCases)
    func rateLimitRefusesAfterFailures(backend: Backend) async throws {
        // 1_750_000_000 is 100 s into a 300 s window: the window ends in 200 s.
        let fixture = try await LoginFixture(backend, realm: RealmChanges(failuresPerWindow: 3, windowSeconds: 300))
        fixture.identities.verifies("t-good", subject: "sub-good")
        for attempt in 1...3 {
            fixture.identities.refuses("t-bad-\(attempt)", reason: "signature")
            #expect(await fixture.refusal(of: fixture.request("t-bad-\(attempt)"))
                == LoginError(.invalidIdentityToken, providerReason: "signature"))
        }
        // Even a good token is refused now, and the refusal is not counted again.
        let blocked = await fixture.refusal(of: fixture.request("t-good"))
        #expect(blocked == LoginError(.rateLimited, retryAfterSeconds: 200))
        #expect(try await fixture.countedFailures() == 3)
        #expect(try await fixture.accountCount() == 0)

        fixture.clock.advance(by: 200)
        // A new window: the same token was never claimed by the blocked attempt.
        let result = try await fixture.login.login(fixture.request("t-good"))
        #expect(result.isNewUser)
    }

    @Test("an unknown or disabled client is unknownClient and counted; only a client that exists is named in the event",
          arguments: Backend.allCases)
    func unknownAndDisabledClients(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        fixture.identities.verifies("t-1", subject: "sub-1")
        fixture.identities.verifies("t-2", subject: "sub-2")
        #expect(await fixture.refusal(of: fixture.request("t-1", clientID: "no-such-app")) == LoginError(.unknownClient))
        #expect(await fixture.refusal(of: fixture.request("t-2", clientID: "retired-app")) == LoginError(.unknownClient))
        #expect(fixture.identities.verificationCount == 0)
        #expect(try await fixture.countedFailures() == 2)
        // Whatever a caller types as client id stays out of the events; a registered client is named.
        #expect(try await fixture.events(.loginFailed).map(\.clientId) == ["retired-app", nil])
        // Neither token was claimed: both still log in through a known client.
        #expect(try await fixture.login.login(fixture.request("t-1")).isNewUser)
    }

    @Test("branch A serves public first-party clients only: confidential and third-party ones are clientNotAllowed",
          arguments: Backend.allCases)
    func branchARefusesOtherClients(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        fixture.identities.verifies("t-1", subject: "sub-1")
        #expect(await fixture.refusal(of: fixture.request("t-1", clientID: "backend-app")) == LoginError(.clientNotAllowed))
        #expect(await fixture.refusal(of: fixture.request("t-1", clientID: "partner")) == LoginError(.clientNotAllowed))
        #expect(fixture.identities.verificationCount == 0)
        #expect(try await fixture.countedFailures() == 2)
        #expect(try await fixture.accountCount() == 0)
    }

    @Test("with registration disabled a new subject is refused and creates nothing; a known one still logs in",
          arguments: Backend.allCases)
    func registrationDisabled(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend, realm: RealmChanges(registrationEnabled: false))
        let known = try await fixture.accounts.create(realmID: LoginFixture.realmID, NewAccount(email: "known@example.com"))
        _ = try await fixture.accounts.link(realmID: LoginFixture.realmID, provider: StubVerifier.provider,
                                            openID: "sub-known", accountID: known.id, email: nil)
        fixture.identities.verifies("t-new", subject: "sub-new", email: "new@example.com", emailVerified: true)
        fixture.identities.verifies("t-known", subject: "sub-known")

        #expect(await fixture.refusal(of: fixture.request("t-new")) == LoginError(.registrationDisabled))
        #expect(try await fixture.account(subject: "sub-new") == nil)
        #expect(try await fixture.accountCount() == 1)
        #expect(try await fixture.countedFailures() == 1)
        let returning = try await fixture.login.login(fixture.request("t-known"))
        #expect(returning.accountID == known.id && !returning.isNewUser)
    }

    @Test("a disabled account is refused as accountDisabled, counted, and gets no session", arguments: Backend.allCases)
    func disabledAccount(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        fixture.identities.verifies("t-1", subject: "sub-1")
        fixture.identities.verifies("t-2", subject: "sub-1")
        let first = try await fixture.login.login(fixture.request("t-1"))
        _ = try await fixture.accounts.update(realmID: LoginFixture.realmID, id: first.accountID,
                                              changes: AccountChanges(status: .disabled), context: ChangeContext(actor: "test"))

        #expect(await fixture.refusal(of: fixture.request("t-2")) == LoginError(.accountDisabled))
        #expect(try await fixture.countedFailures() == 1)
        #expect(try await fixture.events(.loginSucceeded).count == 1)
    }

    @Test("an unknown or malformed realm is realmNotFound and counts against no one", arguments: Backend.allCases)
    func unknownRealm(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        fixture.identities.verifies("t-1", subject: "sub-1")
        #expect(await fixture.refusal(of: fixture.request("t-1", realmID: "elsewhere")) == LoginError(.realmNotFound))
        #expect(await fixture.refusal(of: fixture.request("t-1", realmID: "Not A Slug")) == LoginError(.realmNotFound))
        #expect(fixture.identities.verificationCount == 0)
        #expect(try await fixture.countedFailures() == 0)
    }
}

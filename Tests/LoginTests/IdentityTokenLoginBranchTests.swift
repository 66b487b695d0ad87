import Foundation
import HeraldTestSupport
import Login
import Realms
import Storage
import Testing

/// `IdentityTokenLogin` in process, over the stub provider: what each branch commits.
@Suite("Login pipeline: branch A and branch B")
struct IdentityTokenLoginBranchTests {
    @Test("branch A: a first login of a public first-party client creates the account and starts its session",
          arguments: Backend.allCases)
    func branchACreatesAccount(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        fixture.identities.verifies("t-new", subject: "sub-new", email: "new@example.com", emailVerified: true)
        let result = try await fixture.login.login(fixture.request("t-new"))

        guard case .session(let tokens) = result.branch else {
            Issue.record("expected branch A")
            return
        }
        #expect(result.isNewUser)
        #expect(result.audience == StubIdentityProvider.audience)
        let account = try #require(try await fixture.account(subject: "sub-new"))
        #expect(result.accountID == account.id && tokens.accountID == account.id)
        #expect(account.email == "new@example.com")
        let session = try #require(try await fixture.sessions.session(ofRefreshToken: tokens.refreshToken,
                                                                       realmID: LoginFixture.realmID))
        #expect(session.accountID == account.id && session.clientID == "app" && session.isActive)
        let succeeded = try await fixture.events(.loginSucceeded)
        #expect(succeeded.map(\.reason) == ["created"])
        #expect(succeeded.first?.sessionId == tokens.sessionID)
        #expect(try await fixture.countedFailures() == 0)
    }

    @Test("branch A: a returning login is found by its subject, whatever email it now carries", arguments: Backend.allCases)
    func branchAFindsReturningSubject(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        fixture.identities.verifies("t-1", subject: "sub-back", email: "back@example.com", emailVerified: true)
        fixture.identities.verifies("t-2", subject: "sub-back")
        let first = try await fixture.login.login(fixture.request("t-1"))
        let second = try await fixture.login.login(fixture.request("t-2"))

        #expect(first.isNewUser && !second.isNewUser)
        #expect(second.accountID == first.accountID)
        #expect(try await fixture.accountCount() == 1)
        #expect(try await fixture.events(.loginSucceeded).map(\.reason) == ["existing", "created"])
    }

    @Test("branch A: a returning login waits for 2 round trips on PostgreSQL, its first reads and claim in one, its writes and profile with COMMIT")
    func returningLoginRoundTrips() async throws {
        let fixture = try await LoginFixture(.postgres)
        let postgres = try #require(fixture.database as? PostgresDatabase)
        fixture.identities.verifies("t-first", subject: "sub-r")
        _ = try await fixture.login.login(fixture.request("t-first"))
        fixture.identities.verifies("t-again", subject: "sub-r")
        let before = postgres.roundTrips.total
        let result = try await fixture.login.login(fixture.request("t-again"))
        #expect(!result.isNewUser)
        // BEGIN + settings stamp + failure count + claim + the account by identity + the signing
        // key; then the session, token and event, the account's identities (its profile) and COMMIT.
        #expect(postgres.roundTrips.total - before == 2)
        // The claim committed: the token is now a replay.
        #expect(await fixture.refusal(of: fixture.request("t-again"))
            == LoginError(.invalidIdentityToken, providerReason: LoginError.replayedReason))
    }

    @Test("branch B: a returning login that completes an authorization waits for 3 round trips on PostgreSQL: its first reads and claim, the pending authorization's consumption, then the code and event with COMMIT")
    func branchBRoundTrips() async throws {
        let fixture = try await LoginFixture(.postgres)
        let postgres = try #require(fixture.database as? PostgresDatabase)
        fixture.identities.verifies("t-first", subject: "sub-b-trips", audience: "com.example.stub.web")
        _ = try await fixture.login.login(fixture.request("t-first", clientID: "partner",
                                                          downstreamState: try await fixture.pendingAuthorization(state: "s-1")))
        let handle = try await fixture.pendingAuthorization(state: "s-2")
        fixture.identities.verifies("t-again", subject: "sub-b-trips", audience: "com.example.stub.web")
        let before = postgres.roundTrips.total
        let result = try await fixture.login.login(fixture.request("t-again", clientID: "partner", downstreamState: handle))
        #expect(!result.isNewUser)
        guard case .downstream = result.branch else {
            Issue.record("expected branch B")
            return
        }
        #expect(postgres.roundTrips.total - before == 3)
    }

    @Test("branch A: a new subject with a verified email links to the active account that has it", arguments: Backend.allCases)
    func branchALinksByVerifiedEmail(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        let existing = try await fixture.accounts.create(realmID: LoginFixture.realmID,
                                                         NewAccount(email: "ada@example.com", emailVerified: true))
        fixture.identities.verifies("t-link", subject: "sub-link", email: "Ada@Example.com", emailVerified: true)
        fixture.identities.verifies("t-unverified", subject: "sub-other", email: "ada@example.com", emailVerified: false)

        let linked = try await fixture.login.login(fixture.request("t-link"))
        #expect(!linked.isNewUser)
        #expect(linked.accountID == existing.id)
        #expect(try await fixture.account(subject: "sub-link")?.id == existing.id)
        // An email the provider does not vouch for links nothing: a new account of its own.
        let unverified = try await fixture.login.login(fixture.request("t-unverified"))
        #expect(unverified.isNewUser && unverified.accountID != existing.id)
    }

    @Test("branch B: the verified account completes the pending authorization; its code is stored for that account",
          arguments: Backend.allCases)
    func branchBIssuesCode(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        let handle = try await fixture.pendingAuthorization(state: "backend-state-1")
        fixture.identities.verifies("t-b", subject: "sub-b", audience: "com.example.stub.web")
        let result = try await fixture.login.login(fixture.request("t-b", clientID: "partner", downstreamState: handle))

        guard case .downstream(let redirectURI) = result.branch else {
            Issue.record("expected branch B")
            return
        }
        #expect(result.isNewUser)
        // The audience is the one this token matched, not a fixed value.
        #expect(result.audience == "com.example.stub.web")
        #expect(redirectURI.hasPrefix(LoginFixture.partnerRedirectURI + "?code=ac_"))
        let query = LoginFixture.queryParameters(redirectURI)
        #expect(query["state"] == "backend-state-1")
        #expect(query["iss"] == fixture.issuers.issuer(realmID: LoginFixture.realmID))
        let code = try #require(query["code"])
        let holder = try #require(try await fixture.codeHolder(code))
        #expect(holder.accountID == result.accountID && holder.clientID == "partner")
        #expect(try await fixture.account(subject: "sub-b")?.id == result.accountID)
        #expect(try await !fixture.isPending(handle))
    }

    @Test("branch B: an unknown or consumed state is refused; the token stays claimed, no account is created or linked",
          arguments: Backend.allCases)
    func branchBRefusesUnknownAndConsumedState(backend: Backend) async throws {
        let fixture = try await LoginFixture(backend)
        let existing = try await fixture.accounts.create(realmID: LoginFixture.realmID,
                                                         NewAccount(email: "eve@example.com", emailVerified: true))
        fixture.identities.verifies("t-unknown", subject: "sub-unknown", email: "unknown@example.com", emailVerified: true)
        let unknown = await fixture.refusal(of: fixture.request("t-unknown", clientID: "partner",
                                                                 downstreamState: "ds_no-such-state"))
        #expect(unknown == LoginError(.invalidDownstreamState))
        #expect(try await fixture.account(subject: "sub-unknown") == nil)
        #expect(try await fixture.accountCount() == 1)
        // The claim committed with the refusal: the same token is now a replay, even on branch A.
        #expect(await fixture.refusal(of: fixture.request("t-unknown"))
            == LoginError(.invalidIdentityToken, providerReason: LoginError.replayedReason))

        let handle = try await fixture.pendingAuthorization(state: "backend-state-2")
        fixture.identities.verifies("t-first", subject: "sub-first")
        _ = try await fixture.login.login(fixture.request("t-first", clientID: "partner", downstreamState: handle))
        // A second login on the used state would have linked Eve's account by her verified email:
        // the link is undone with the refusal, and the account (not created by it) is reported.
        fixture.identities.verifies("t-second", subject: "sub-eve", email: "eve@example.com", emailVerified: true)
        let consumed = await fixture.refusal(of: fixture.request("t-second", clientID: "partner", downstreamState: handle))
        #expect(consumed == LoginError(.invalidDownstreamState, accountID: existing.id))
        #expect(try await fixture.account(subject: "sub-eve") == nil)
        #expect(try await fixture.events(.loginFailed).map(\.reason)
            == ["invalid_downstream_state", "replayed", "invalid_downstream_state"])
    }
}

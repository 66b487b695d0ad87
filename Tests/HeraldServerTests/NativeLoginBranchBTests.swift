import Foundation
import HeraldApple
import HeraldTestSupport
import JOSE
import Synchronization
import Testing
@testable import HeraldServer

@Suite("Apple native login, branch B hook")
struct NativeLoginBranchBTests {
    /// The orchestration of the running server, with branch B wired to `downstream`.
    static func login(_ fixture: NativeLoginFixture, downstream: @escaping DownstreamCompleter) -> AppleNativeLogin {
        fixture.herald.application.context.nativeLogin.completingDownstream(with: downstream)
    }

    @Test("with downstreamState the verified account goes to the completer, whose redirect URI is the result", arguments: Backend.allCases)
    func downstreamCompletion(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let seen = Mutex<DownstreamCompletionRequest?>(nil)
            let login = Self.login(fixture) { _, request in
                seen.withLock { $0 = request }
                return "https://partner.example/callback?code=ac_x&state=\(request.downstreamState)&iss=\(request.issuer)"
            }
            let nonce = fixture.freshNonce()
            let result = try await login.login(NativeLoginRequest(
                realmID: "acme", identityToken: fixture.token(subject: "sub.branch.b", nonce: nonce), clientID: "partner",
                rawNonce: nonce, downstreamState: "st-1", clientIP: "192.0.2.9"))
            guard case .downstream(let redirect, let accountID, let isNew) = result else {
                Issue.record("expected branch B")
                return
            }
            let request = try #require(seen.withLock { $0 })
            #expect(request.realmID == "acme" && request.clientID == "partner" && request.downstreamState == "st-1")
            #expect(request.accountID == accountID)
            #expect(request.issuer == fixture.herald.application.context.issuers.issuer(realmID: "acme"))
            #expect(redirect.hasPrefix("https://partner.example/callback?code=ac_x&state=st-1"))
            #expect(isNew)
        }
    }

    @Test("a completer refusing the state answers invalid_downstream_state, reports no rolled-back account and counts as a failed attempt",
          arguments: Backend.allCases)
    func refusedState(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend,
                                          realmFields: ["rateLimit": ["failuresPerWindow": 2, "windowSeconds": 300]],
                                          clock: NativeLoginFixture.clockInsideOneWindow()) { fixture in
            let returning = try await fixture.loginOK(subject: "sub.returning")["userId"]?.stringValue
            let login = Self.login(fixture) { _, _ in throw NativeLoginError(.invalidDownstreamState) }
            // A new user's account is rolled back with the refusal, so none is reported; a
            // returning user's account exists and is. (No email: nothing links sub.new.)
            for (subject, accountID) in [("sub.new", nil), ("sub.returning", returning)] {
                let nonce = fixture.freshNonce()
                let token = fixture.token(subject: subject, nonce: nonce, email: nil)
                let request = NativeLoginRequest(realmID: "acme", identityToken: token, clientID: "partner", rawNonce: nonce,
                                                 downstreamState: "st-unknown", clientIP: "192.0.2.10")
                do throws(NativeLoginError) {
                    _ = try await login.login(request)
                    Issue.record("expected invalid_downstream_state")
                } catch {
                    #expect(error.code == .invalidDownstreamState)
                    #expect(error.accountID == accountID, "\(subject)")
                }
            }
            // The refusals counted: the next attempt from that IP is rate limited.
            let next = fixture.freshNonce()
            do throws(NativeLoginError) {
                _ = try await login.login(NativeLoginRequest(realmID: "acme", identityToken: fixture.token(nonce: next),
                                                             clientID: "ios-app", rawNonce: next, downstreamState: nil,
                                                             clientIP: "192.0.2.10"))
                Issue.record("expected rate_limited")
            } catch {
                #expect(error.code == .rateLimited)
            }
        }
    }
}

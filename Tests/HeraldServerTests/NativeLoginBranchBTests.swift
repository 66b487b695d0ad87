import Foundation
import Grants
import HeraldTestSupport
import JOSE
import Login
import Storage
import Testing
@testable import HeraldServer

@Suite("Apple native login, branch B")
struct NativeLoginBranchBTests {
    /// /authorize for the fixture's third-party client with the backend's `state`; the
    /// downstream handle the app completes it with.
    static func authorize(_ fixture: NativeLoginFixture, state: String) async throws -> String {
        let query: [(String, String)] = [
            ("response_type", "code"), ("client_id", NativeLoginFixture.thirdParty),
            ("redirect_uri", "https://partner.example/callback"), ("state", state),
            ("code_challenge", OAuthFixture.challenge), ("code_challenge_method", "S256"),
        ]
        let response = try await fixture.send(
            "GET", "/api/oauth/acme/authorize?" + query.map { "\($0.0)=\(RedirectURI.encode($0.1))" }.joined(separator: "&"),
            headers: [("Accept", "application/json")])
        return try #require(response.json["downstreamState"]?.stringValue, "\(response.status) \(response.text)")
    }

    @Test("with downstreamState the verified account completes the pending authorization: the redirect carries its code, the backend's state and the issuer",
          arguments: Backend.allCases)
    func downstreamCompletion(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend) { fixture in
            let context = fixture.herald.application.services
            let handle = try await Self.authorize(fixture, state: "st-1")
            let nonce = fixture.freshNonce()
            let result = try await context.nativeLogin.login(LoginRequest(
                realmID: "acme", identityToken: fixture.token(subject: "sub.branch.b", nonce: nonce), clientID: "partner",
                rawNonce: nonce, downstreamState: handle, clientIP: "192.0.2.9"))
            guard case .downstream(let redirect) = result.branch else {
                Issue.record("expected branch B")
                return
            }
            let accountID = result.accountID, isNew = result.isNewUser
            // The audience the verifier matched travels with the result (the app Apple issued its code to).
            #expect(result.audience == AppleTokenMinter.defaultAudience)
            let query = queryParameters(redirect)
            #expect(redirect.hasPrefix("https://partner.example/callback?code=ac_"))
            #expect(query["state"] == "st-1")
            #expect(query["iss"] == context.issuers.issuer(realmID: "acme"))
            let code = try #require(query["code"])
            let stored = try await context.database.read { db in
                try db.queryOne("SELECT account_id, client_id FROM authorization_codes WHERE code_hash = ?",
                                .blob(SHA256.hash(Array(code.utf8)))).map { [try $0.string("account_id"), try $0.string("client_id")] }
            }
            #expect(stored == [accountID, "partner"])
            #expect(isNew)
        }
    }

    @Test("an unknown downstream state answers invalid_downstream_state, reports no rolled-back account and counts as a failed attempt",
          arguments: Backend.allCases)
    func refusedState(backend: Backend) async throws {
        try await NativeLoginFixture.with(backend: backend,
                                          realmFields: ["rateLimit": ["failuresPerWindow": 2, "windowSeconds": 300]],
                                          clock: NativeLoginFixture.clockInsideOneWindow()) { fixture in
            let returning = try await fixture.loginOK(subject: "sub.returning")["userId"]?.stringValue
            let login = fixture.herald.application.services.nativeLogin
            // A new user's account is rolled back with the refusal, so none is reported; a
            // returning user's account exists and is. (No email: nothing links sub.new.)
            for (subject, accountID) in [("sub.new", nil), ("sub.returning", returning)] {
                let nonce = fixture.freshNonce()
                let token = fixture.token(subject: subject, nonce: nonce, email: nil)
                let request = LoginRequest(realmID: "acme", identityToken: token, clientID: "partner", rawNonce: nonce,
                                           downstreamState: "ds_unknown", clientIP: "192.0.2.10")
                do throws(LoginError) {
                    _ = try await login.login(request)
                    Issue.record("expected invalid_downstream_state")
                } catch {
                    #expect(error.code == .invalidDownstreamState)
                    #expect(error.accountID == accountID, "\(subject)")
                }
            }
            // The refusals counted: the next attempt from that IP is rate limited.
            let next = fixture.freshNonce()
            do throws(LoginError) {
                _ = try await login.login(LoginRequest(realmID: "acme", identityToken: fixture.token(nonce: next),
                                                       clientID: "ios-app", rawNonce: next, downstreamState: nil,
                                                       clientIP: "192.0.2.10"))
                Issue.record("expected rate_limited")
            } catch {
                #expect(error.code == .rateLimited)
            }
        }
    }
}

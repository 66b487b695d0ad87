import Foundation
import HeraldTestSupport
import JOSE
import Testing
@testable import HeraldServer

/// A hanging Apple JWKS holds only the logins that need it.
@Suite struct HangingJWKSTests {
    @Test("while Apple's JWKS hangs a login, 60 concurrent requests that do not need it all answer")
    func hangingJWKSDoesNotDelayOtherRequests() async throws {
        try await NativeLoginFixture.with { fixture in
            fixture.apple.setBehaviour(.hang)
            let nonce = fixture.freshNonce()
            let token = fixture.token(nonce: nonce)
            // Cold cache: this login needs the JWKS and waits on the hanging fetch.
            async let stuckLogin = fixture.login(token: token, nonce: nonce)
            await fixture.apple.waitForRequests(1)

            let paths = ["/healthz", "/api/oauth/acme/jwks.json", "/api/oauth/acme/.well-known/openid-configuration",
                         "/api/auth/acme/me"]
            let client = fixture.herald.client
            let results = await concurrently(60) { index in
                try client.send("GET", paths[index % paths.count])
            }
            let statuses = try results.map { try $0.get().status }
            #expect(statuses.enumerated().allSatisfy { index, status in
                paths[index % paths.count] == "/api/auth/acme/me" ? status == 401 : status == 200
            })
            // They were answered while the fetch was still held, not after it gave up.
            #expect(fixture.apple.heldConnectionCount == 1)

            fixture.apple.releaseHeldConnections()
            let login = try await stuckLogin
            #expect(login.status == 503)
            #expect(login.code == "apple_unavailable")
        }
    }
}

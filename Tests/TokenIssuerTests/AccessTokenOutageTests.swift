import Foundation
import HeraldTestSupport
import Storage
import Testing
@testable import TokenIssuer

/// Issue #18: a database that cannot be read is an outage to report (503), never a verdict on
/// the token: answering "revoked" or "invalid" would tell the app to sign its user out.
@Suite("Access tokens during a database outage")
struct AccessTokenOutageTests {
    @Test("validation and token lookups throw a temporary storage error while reads fail, and verify again after",
          arguments: Backend.allCases)
    func outageThrowsInsteadOfRefusing(backend: Backend) async throws {
        let fixture = try await TokenFixture(backend)
        let outage = OutageDatabase(fixture.database)
        let issuers = RealmIssuers(publicURL: "https://id.example")
        let signer = TokenSigner(masterKey: fixture.masterKey, issuers: issuers)
        let sessions = SessionStore(database: outage, signer: signer, now: fixture.clock.closure)
        let verifier = AccessTokenVerifier(database: outage, signer: signer, now: fixture.clock.closure)
        // A verifier that never saw the key reads it, so its read fails first.
        let cold = AccessTokenVerifier(database: outage, signer: TokenSigner(masterKey: fixture.masterKey, issuers: issuers),
                                       now: fixture.clock.closure)
        let issued = try await sessions.startSession(fixture.request(), in: outage)
        let idToken = try #require(issued.idToken)

        let reads: [(String, @Sendable () async throws -> Void)] = [
            ("session read", { _ = try await verifier.validate(issued.accessToken, realmID: "acme") }),
            ("key read", { _ = try await cold.validate(issued.accessToken, realmID: "acme") }),
            ("ID token's key read", { _ = try await cold.misusedTokenKind(idToken, realmID: "acme") }),
            ("refresh token read", { _ = try await verifier.misusedTokenKind(issued.refreshToken, realmID: "acme") }),
            ("logout's refresh token read", { _ = try await sessions.sessionID(ofRefreshToken: issued.refreshToken, realmID: "acme") }),
            ("introspection's refresh token read", { _ = try await sessions.session(ofRefreshToken: issued.refreshToken, realmID: "acme") }),
        ]
        outage.isDown = true
        for (what, read) in reads {
            let error = await #expect(throws: StorageError.self, "\(what)") { try await read() }
            #expect(error?.isTemporary == true, "\(what)")
        }

        outage.isDown = false
        guard case .valid(let claims) = try await cold.validate(issued.accessToken, realmID: "acme") else {
            Issue.record("the token verifies once the database answers")
            return
        }
        #expect(claims.sessionID == issued.sessionID)
        #expect(try await verifier.misusedTokenKind(issued.refreshToken, realmID: "acme") == .refreshToken)
    }
}

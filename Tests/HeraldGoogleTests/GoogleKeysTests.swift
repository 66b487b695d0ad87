import Foundation
@testable import HeraldGoogle
import HeraldTestSupport
import JOSE
import ProviderKeys
import Testing

@Suite("Google JWKS", .timeLimit(.minutes(1)))
struct GoogleKeysTests {
    @Test func defaultURLIsGooglesCerts() {
        #expect(GoogleJWKS.configuration().url.absoluteString == "https://www.googleapis.com/oauth2/v3/certs")
        #expect(GoogleJWKS.environmentVariable == "HERALD_GOOGLE_JWKS_URL")
    }

    @Test func unreachableJWKSIsUnavailableNotRefused() async throws {
        let server = try FakeJWKSServer(document: googleKeys.document)
        defer { server.stop() }
        server.setBehaviour(.status(503))
        var google = FakeGoogle()
        google.keys = JWKSCache(configuration: GoogleJWKS.configuration(url: server.url), now: google.clock.closure)
        guard case .unavailable = await google.result(google.minter.token()) else {
            Issue.record("expected unavailable")
            return
        }
    }

    @Test func unknownKidRefetchIsBoundedAndFindsARotatedKey() async throws {
        let server = try FakeJWKSServer(document: googleKeys.document)
        defer { server.stop() }
        server.setBehaviour(.serve(cacheControl: "public, max-age=20000"))
        var google = FakeGoogle()
        google.keys = JWKSCache(configuration: GoogleJWKS.configuration(url: server.url), now: google.clock.closure)
        #expect(await google.result(google.minter.token()).claims != nil)
        #expect(server.requestCount == 1)
        // Unknown kids within 30 s of the last fetch cost Google nothing.
        for index in 0..<5 {
            #expect(await google.result(google.minter.token { $0.kid = "made-up-\(index)" }) == .rejected(.unknownKey))
        }
        #expect(server.requestCount == 1)
        // After the interval a rotated key is fetched once and verifies.
        server.setDocument(googleKeys.rotatedDocument)
        google.clock.advance(by: 31)
        let rotated = google.minter.token { $0.kid = googleKeys.rotatedKeyID; $0.signingKey = googleKeys.rotated }
        #expect(await google.result(rotated).claims != nil)
        #expect(server.requestCount == 2)
    }
}

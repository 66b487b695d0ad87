import Foundation
@testable import HeraldGoogle
import HeraldTestSupport
import JOSE
import Testing

@Suite("Google ID token verification")
struct GoogleVerificationTests {
    let google = FakeGoogle()

    @Test func validTokenIsVerifiedWithItsClaims() async throws {
        let claims = try #require(await google.result(google.minter.token()).claims)
        #expect(claims.subject == GoogleTokenMinter.defaultSubject)
        #expect(claims.email == "ada@example.com")
        #expect(claims.emailVerified)
        #expect(claims.hostedDomain == "example.com")
        #expect(claims.name.displayName == "Ada Lovelace" && claims.name.givenName == "Ada" && claims.name.familyName == "Lovelace")
        #expect(claims.picture == "https://lh3.googleusercontent.com/a/photo")
        #expect(claims.audience == GoogleTokenMinter.defaultClientID)
    }

    @Test(arguments: ["accounts.google.com", "https://accounts.google.com"])
    func bothIssuerSpellingsAreAccepted(issuer: String) async {
        #expect(await google.result(google.minter.token { $0.claims["iss"] = .string(issuer) }).claims != nil)
    }

    @Test func unverifiedEmailIsCarriedAsFalse() async throws {
        let claims = try #require(await google.result(google.minter.token { $0.claims["email_verified"] = .bool(false) }).claims)
        #expect(claims.emailVerified == false)
        let absent = try #require(await google.result(google.minter.token { $0.claims["email_verified"] = nil }).claims)
        #expect(absent.emailVerified == false)
    }

    @Test func azpMayBeAbsent() async {
        #expect(await google.result(google.minter.token { $0.claims["azp"] = nil }).claims != nil)
    }

    @Test func azpMayBeAnotherOfTheRealmsClientIDs() async {
        #expect(await google.result(google.minter.token { $0.claims["azp"] = "web.apps.googleusercontent.com" }).claims != nil)
    }

    @Test func hostedDomainUnsetAcceptsAnyAccount() async {
        #expect(await google.result(google.minter.token { $0.claims["hd"] = nil }).claims != nil)
        #expect(await google.result(google.minter.token { $0.claims["hd"] = "other.org" }).claims != nil)
    }

    @Test func hostedDomainSetAcceptsItsAccounts() async {
        #expect(await google.result(google.minter.token(), policy: googlePolicy(hostedDomain: "example.com")).claims != nil)
    }

    @Test func nonceNotRequiredAcceptsATokenWithout() async {
        let token = google.minter.token { $0.claims["nonce"] = nil }
        #expect(await google.result(token, policy: googlePolicy(nonceRequired: false, rawNonce: nil)).claims != nil)
    }

    // One test per refusal reason.

    @Test func malformed() async {
        #expect(await google.result("not.a.jws") == .rejected(.malformed))
        #expect(await google.result(google.minter.token { $0.claims["sub"] = nil }) == .rejected(.malformed))
        #expect(await google.result(google.minter.token { $0.claims["exp"] = .string("soon") }) == .rejected(.malformed))
    }

    @Test func overTheSizeLimitIsTooLarge() async {
        let token = google.minter.token { $0.claims["pad"] = .string(String(repeating: "x", count: 17_000)) }
        #expect(await google.result(token) == .tooLarge)
    }

    @Test func algorithm() async {
        #expect(await google.result(google.minter.token { $0.alg = "none"; $0.emptySignature = true }) == .rejected(.algorithm))
        #expect(await google.result(google.minter.token { $0.alg = "HS256" }) == .rejected(.algorithm))
        // Google signs RS256 only: an ES256 token under a published EC key is still refused.
        let es256 = google.minter.token { $0.alg = "ES256"; $0.kid = googleKeys.ecKeyID; $0.signingKey = googleKeys.ec }
        #expect(await google.result(es256) == .rejected(.algorithm))
        // An RS256 header naming the EC key does not fit it.
        #expect(await google.result(google.minter.token { $0.kid = googleKeys.ecKeyID }) == .rejected(.algorithm))
    }

    @Test func unknownKey() async {
        #expect(await google.result(google.minter.token { $0.kid = "nope" }) == .rejected(.unknownKey))
        #expect(await google.result(google.minter.token { $0.kid = nil }) == .rejected(.unknownKey))
    }

    @Test func signature() async {
        #expect(await google.result(google.minter.token { $0.tamperSignature = true }) == .rejected(.signature))
        #expect(await google.result(google.minter.token { $0.signingKey = googleKeys.rotated }) == .rejected(.signature))
    }

    @Test func issuer() async {
        #expect(await google.result(google.minter.token { $0.claims["iss"] = "https://appleid.apple.com" }) == .rejected(.issuer))
        #expect(await google.result(google.minter.token { $0.claims["iss"] = "http://accounts.google.com" }) == .rejected(.issuer))
        #expect(await google.result(google.minter.token { $0.claims["iss"] = nil }) == .rejected(.issuer))
    }

    @Test func audience() async {
        #expect(await google.result(google.minter.token { $0.claims["aud"] = "someone-else" }) == .rejected(.audience))
        #expect(await google.result(google.minter.token(), policy: googlePolicy(clientIDs: ["other"])) == .rejected(.audience))
    }

    @Test func azp() async {
        #expect(await google.result(google.minter.token { $0.claims["azp"] = "someone-else" }) == .rejected(.azp))
    }

    @Test func expired() async {
        let now = google.clock.now.timeIntervalSince1970.rounded(.down)
        #expect(await google.result(google.minter.token { $0.claims["exp"] = .number(now - 61) }) == .rejected(.expired))
        #expect(await google.result(google.minter.token { $0.claims["exp"] = .number(now - 59) }).claims != nil)
    }

    @Test func notYetValid() async {
        let now = google.clock.now.timeIntervalSince1970.rounded(.down)
        #expect(await google.result(google.minter.token { $0.claims["iat"] = .number(now + 120) }) == .rejected(.notYetValid))
        #expect(await google.result(google.minter.token { $0.claims["iat"] = .number(now + 59) }).claims != nil)
    }

    @Test func nonce() async {
        // Google carries the app's nonce verbatim: Apple's SHA-256 form is refused.
        let hashed = google.minter.token { $0.claims["nonce"] = .string(SHA256.hexDigest(GoogleTokenMinter.defaultNonce)) }
        #expect(await google.result(hashed) == .rejected(.nonce))
        #expect(await google.result(google.minter.token { $0.claims["nonce"] = "Google-nonce-5e2a" }) == .rejected(.nonce))
        #expect(await google.result(google.minter.token(), policy: googlePolicy(rawNonce: nil)) == .rejected(.nonce))
        #expect(await google.result(google.minter.token { $0.claims["nonce"] = nil }) == .rejected(.nonce))
        let without = google.minter.token { $0.claims["nonce"] = nil }
        #expect(await google.result(without, policy: googlePolicy(rawNonce: nil)) == .rejected(.nonce))
    }

    @Test func hostedDomain() async {
        let policy = googlePolicy(hostedDomain: "example.com")
        #expect(await google.result(google.minter.token { $0.claims["hd"] = "other.org" }, policy: policy) == .rejected(.hostedDomain))
        #expect(await google.result(google.minter.token { $0.claims["hd"] = nil }, policy: policy) == .rejected(.hostedDomain))
    }

    @Test func reasonsAreTheWireValues() {
        #expect(GoogleRejectionReason.allCases.map(\.rawValue) == [
            "malformed", "algorithm", "unknown_key", "signature", "issuer", "audience", "azp", "expired", "not_yet_valid",
            "nonce", "hosted_domain", "replayed",
        ])
    }
}

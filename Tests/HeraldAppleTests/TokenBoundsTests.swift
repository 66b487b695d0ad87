import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import Testing

/// Issue #20 item 5: a signed Apple token is still refused when it is older, lives longer, or
/// names a longer `sub` than Apple issues. Each bound is tested on both sides of its edge, in
/// verification and in diagnosis (which must agree).
@Suite("Apple identity token bounds")
struct TokenBoundsTests {
    let apple = OfflineApple()
    var now: Double { apple.clock.now.timeIntervalSince1970 }

    func verify(_ token: String) async -> AppleVerificationResult {
        await apple.verifier().verifyDeferringReplay(token: token, policy: defaultPolicy()).result
    }

    func diagnosisReason(_ token: String) async -> String? {
        await AppleTokenDiagnosis.diagnose(token: token, audiences: [AppleTokenMinter.defaultAudience],
                                           rawNonce: AppleTokenMinter.defaultRawNonce, keys: apple.keys, now: apple.clock.now).reason
    }

    @Test func issuedMoreThanAnHourAndTheLeewayAgoIsExpired() async throws {
        let edge = ExpiryCheck.maximumAgeSeconds + AppleIdentityVerifier.clockLeewaySeconds
        let atEdge = apple.minter.token { $0.claims["iat"] = .number(now - edge); $0.claims["exp"] = .number(now + 600) }
        #expect(await verify(atEdge).claims != nil)
        let older = apple.minter.token { $0.claims["iat"] = .number(now - edge - 1); $0.claims["exp"] = .number(now + 600) }
        #expect(await verify(older) == .rejected(.expired))
        #expect(await diagnosisReason(older) == "expired")
    }

    @Test func lifetimeOverADayIsMalformed() async throws {
        let atEdge = apple.minter.token { $0.claims["exp"] = .number(now + 86_400) }
        #expect(await verify(atEdge).claims != nil)
        let longer = apple.minter.token { $0.claims["exp"] = .number(now + 86_401) }
        #expect(await verify(longer) == .rejected(.malformed))
        #expect(await diagnosisReason(longer) == "malformed")
        // Decided with the structure, so even a forged signature is reported as malformed first.
        let forged = apple.minter.token { $0.claims["exp"] = .number(now + 86_401); $0.tamperSignature = true }
        #expect(await verify(forged) == .rejected(.malformed))
    }

    @Test func subjectOver255BytesIsMalformed() async throws {
        let atEdge = apple.minter.token { $0.claims["sub"] = .string(String(repeating: "a", count: 255)) }
        #expect(await verify(atEdge).claims?.subject.utf8.count == 255)
        let longer = apple.minter.token { $0.claims["sub"] = .string(String(repeating: "a", count: 256)) }
        #expect(await verify(longer) == .rejected(.malformed))
        #expect(await diagnosisReason(longer) == "malformed")
        // Bytes, not characters: 128 two-byte characters are 256 bytes.
        let wide = apple.minter.token { $0.claims["sub"] = .string(String(repeating: "é", count: 128)) }
        #expect(await verify(wide) == .rejected(.malformed))
    }

    @Test func rejectionDetailsNameTheBoundNeverTheValue() async throws {
        let subject = String(repeating: "q", count: 300)
        let report = await AppleTokenDiagnosis.diagnose(
            token: apple.minter.token { $0.claims["sub"] = .string(subject) }, audiences: [AppleTokenMinter.defaultAudience],
            rawNonce: AppleTokenMinter.defaultRawNonce, keys: apple.keys, now: apple.clock.now)
        let structure = try #require(report.checks.first { $0.name == .structure })
        #expect(structure.outcome.detail == "claim sub is over 255 bytes")
        let long = await AppleTokenDiagnosis.diagnose(
            token: apple.minter.token { $0.claims["exp"] = .number(now + 90_000) }, audiences: [AppleTokenMinter.defaultAudience],
            rawNonce: AppleTokenMinter.defaultRawNonce, keys: apple.keys, now: apple.clock.now)
        #expect(long.checks.first { $0.name == .structure }?.outcome.detail == "claim exp is more than 86400 s after iat")
        let old = await AppleTokenDiagnosis.diagnose(
            token: apple.minter.token { $0.claims["iat"] = .number(now - 7_200) }, audiences: [AppleTokenMinter.defaultAudience],
            rawNonce: AppleTokenMinter.defaultRawNonce, keys: apple.keys, now: apple.clock.now)
        let expiry = try #require(old.checks.first { $0.name == .expiry })
        #expect(expiry.outcome.failureReason == .expired)
        #expect(expiry.outcome.detail.contains("older than the 3600 s accepted"))
    }
}

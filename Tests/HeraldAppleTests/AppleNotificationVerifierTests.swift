import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import Testing

/// The notification verifier's lifetime checks, offline at a fixed instant: Apple's payloads
/// carry `exp` = `iat` + 1 day, and an expired one is refused (RFC 7519 §4.1.4) with the
/// identity tokens' leeway.
@Suite("Apple notification verifier lifetime")
struct AppleNotificationVerifierTests {
    private let apple = OfflineApple()
    private var now: Int64 { Int64(apple.clock.now.timeIntervalSince1970) }
    private static let leeway = Int64(AppleIdentityVerifier.clockLeewaySeconds)

    /// A notification payload issued `issuedAgo` seconds before now, with `exp` as given
    /// (`nil` leaves the claim out).
    private func verify(issuedAgo: Int64 = 0, exp: JSONValue?) async -> AppleNotificationVerifier.Result {
        let event: JSONValue = ["type": "account-delete", "sub": .string(AppleTokenMinter.defaultSubject)]
        var claims: [String: JSONValue] = [
            "iss": "https://appleid.apple.com", "aud": "com.example.herald.web", "iat": .number(Double(now - issuedAgo)),
            "jti": "jti-1", "events": event,
        ]
        claims["exp"] = exp
        let payload = apple.minter.token { $0.claims = claims }
        let verifier = AppleNotificationVerifier(keys: apple.keys, now: apple.clock.closure)
        return await verifier.verify(payload: payload, audiences: ["com.example.herald.web"])
    }

    private static func isVerified(_ result: AppleNotificationVerifier.Result) -> Bool {
        if case .verified = result { return true }
        return false
    }

    @Test func expiredPayloadIsRejectedAsExpired() async {
        let result = await verify(issuedAgo: 2 * 86_400, exp: .number(Double(now - 86_400)))
        #expect(result == .rejected(.token(.expired)))
    }

    @Test func payloadExpiredByLessThanTheLeewayIsVerified() async {
        #expect(Self.isVerified(await verify(issuedAgo: 86_400, exp: .number(Double(now - Self.leeway + 1)))))
        #expect(await verify(issuedAgo: 86_400, exp: .number(Double(now - Self.leeway))) == .rejected(.token(.expired)))
    }

    @Test func payloadWithinItsLifetimeOrWithoutExpIsVerified() async {
        #expect(Self.isVerified(await verify(exp: .number(Double(now + 86_400)))))
        #expect(Self.isVerified(await verify(issuedAgo: 3 * 86_400, exp: nil)), "no exp: bounded by the iat age alone")
    }

    @Test(arguments: [JSONValue.number(1.5e9 + 0.5), .number(-1), .number(1e20), .string("1750000000"), .null])
    func expThatIsNotAWholeSecondInRangeIsMalformed(exp: JSONValue) async {
        #expect(await verify(exp: exp) == .rejected(.token(.malformed)))
    }
}

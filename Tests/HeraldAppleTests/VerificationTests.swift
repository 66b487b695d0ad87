import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import Testing

@Suite("Apple identity token verification")
struct VerificationTests {
    let apple = OfflineApple()

    func verify(_ token: String, _ policy: AppleVerificationPolicy = defaultPolicy()) async -> AppleVerificationResult {
        await apple.verifier().verifyDeferringReplay(token: token, policy: policy).result
    }

    // MARK: accepted tokens

    @Test func validRS256TokenYieldsItsClaims() async throws {
        let result = await verify(apple.minter.token())
        let claims = try #require(result.claims)
        #expect(claims.subject == AppleTokenMinter.defaultSubject)
        #expect(claims.email == "someone@example.com")
        #expect(claims.emailVerified)
        #expect(!claims.isPrivateEmail)
        #expect(claims.audience == AppleTokenMinter.defaultAudience)
        #expect(claims.nonce == AppleTokenMinter.nonceClaim(for: AppleTokenMinter.defaultRawNonce))
        #expect(claims.issuedAt == Date(timeIntervalSince1970: apple.clock.now.timeIntervalSince1970.rounded(.down)))
        #expect(claims.expiresAt == claims.issuedAt.addingTimeInterval(600))
        #expect(claims.authTime == claims.issuedAt)
    }

    @Test func validES256TokenIsAccepted() async throws {
        let token = apple.minter.token { $0.alg = "ES256"; $0.kid = sharedKeys.ecKeyID; $0.signingKey = sharedKeys.ec }
        #expect(await verify(token).claims != nil)
    }

    @Test func stringBooleansAreAccepted() async throws {
        let token = apple.minter.token {
            $0.claims["email_verified"] = .string("false")
            $0.claims["is_private_email"] = .string("true")
        }
        let claims = try #require(await verify(token).claims)
        #expect(!claims.emailVerified)
        #expect(claims.isPrivateEmail)
    }

    @Test func privateRelayEmailIsMarkedPrivateWithoutTheClaim() async throws {
        let token = apple.minter.token { $0.claims["email"] = .string("x7q2@privaterelay.appleid.com") }
        let claims = try #require(await verify(token).claims)
        #expect(claims.isPrivateEmail)
    }

    @Test func tokenWithoutEmailHasNoEmailAndIsUnverified() async throws {
        let token = apple.minter.token {
            $0.claims["email"] = nil
            $0.claims["email_verified"] = nil
        }
        let claims = try #require(await verify(token).claims)
        #expect(claims.email == nil)
        #expect(!claims.emailVerified)
    }

    @Test func audienceArrayIntersectingTheRealmIsAccepted() async throws {
        let token = apple.minter.token { $0.claims["aud"] = .array([.string("com.other.app"), .string("com.example.herald.web")]) }
        let claims = try #require(await verify(token).claims)
        #expect(claims.audience == "com.example.herald.web")
    }

    @Test func lifetimeWithinLeewayIsAccepted() async throws {
        let now = apple.clock.now.timeIntervalSince1970
        let token = apple.minter.token {
            $0.claims["exp"] = .number(now - 59)
            $0.claims["iat"] = .number(now + 59)
        }
        #expect(await verify(token).claims != nil)
    }

    @Test func tokenWithoutNonceIsAcceptedWhenRealmDoesNotRequireOne() async throws {
        let token = apple.minter.token { $0.claims["nonce"] = nil }
        #expect(await verify(token, defaultPolicy(nonceRequired: false, rawNonce: nil)).claims != nil)
    }

    // MARK: one rejection per reason

    @Test(arguments: ["", "abc", "a.b", "a.b.c.d", "!!!.???.***"])
    func nonJWSIsMalformed(_ token: String) async throws {
        #expect(await verify(token) == .rejected(.malformed))
    }

    @Test func claimsWithWrongTypesAreMalformed() async throws {
        #expect(await verify(apple.minter.token { $0.claims["sub"] = nil }) == .rejected(.malformed))
        #expect(await verify(apple.minter.token { $0.claims["exp"] = .string("soon") }) == .rejected(.malformed))
        #expect(await verify(apple.minter.token { $0.claims["aud"] = .number(3) }) == .rejected(.malformed))
        #expect(await verify(apple.minter.token { $0.claims["email_verified"] = .string("yes") }) == .rejected(.malformed))
    }

    @Test func criticalHeaderExtensionIsMalformed() async throws {
        let token = apple.minter.token { $0.extraHeader["crit"] = .array([.string("exp")]) }
        #expect(await verify(token) == .rejected(.malformed))
    }

    @Test func tokenOver16KiBIsTooLargeAndCountsAsMalformed() async throws {
        let token = apple.minter.token { $0.claims["padding"] = .string(String(repeating: "p", count: 16_384)) }
        let result = await verify(token)
        #expect(result == .tooLarge)
        #expect(result.rejectionReason == .malformed)
    }

    @Test(arguments: ["none", "HS256", "RS384", "PS256", "EdDSA"])
    func algorithmOutsideRS256AndES256IsRejected(_ alg: String) async throws {
        let token = apple.minter.token { $0.alg = alg; $0.signingAlgorithm = alg == "EdDSA" ? .rs256 : nil }
        #expect(await verify(token) == .rejected(.algorithm))
    }

    @Test func unsignedNoneTokenIsNeverAccepted() async throws {
        let token = apple.minter.token { $0.alg = "none"; $0.emptySignature = true }
        let result = await verify(token)
        #expect(result == .rejected(.algorithm) || result == .rejected(.malformed))
    }

    @Test func algorithmIsDecidedBeforeAMissingOrUnknownKid() async throws {
        #expect(await verify(apple.minter.token { $0.alg = "none"; $0.kid = nil }) == .rejected(.algorithm))
        #expect(await verify(apple.minter.token { $0.alg = "HS256"; $0.kid = "no-such-kid" }) == .rejected(.algorithm))
    }

    @Test func algorithmNotFittingTheKeyTypeIsAlgorithm() async throws {
        // ES256 header naming Apple's RSA key, and RS256 naming the EC key.
        let esOnRSA = apple.minter.token { $0.alg = "ES256"; $0.kid = sharedKeys.rsaKeyID; $0.signingKey = sharedKeys.ec }
        let rsOnEC = apple.minter.token { $0.alg = "RS256"; $0.kid = sharedKeys.ecKeyID; $0.signingKey = sharedKeys.rsa }
        #expect(await verify(esOnRSA) == .rejected(.algorithm))
        #expect(await verify(rsOnEC) == .rejected(.algorithm))
    }

    @Test func missingKidIsUnknownKey() async throws {
        #expect(await verify(apple.minter.token { $0.kid = nil }) == .rejected(.unknownKey))
    }

    @Test func unknownKidIsUnknownKey() async throws {
        #expect(await verify(apple.minter.token { $0.kid = "kid-apple-never-published" }) == .rejected(.unknownKey))
    }

    @Test func tamperedSignatureIsSignature() async throws {
        #expect(await verify(apple.minter.token { $0.tamperSignature = true }) == .rejected(.signature))
        let esTampered = apple.minter.token {
            $0.alg = "ES256"; $0.kid = sharedKeys.ecKeyID; $0.signingKey = sharedKeys.ec; $0.tamperSignature = true
        }
        #expect(await verify(esTampered) == .rejected(.signature))
    }

    @Test func signatureByAnotherKeyIsSignature() async throws {
        let token = apple.minter.token { $0.signingKey = sharedKeys.rotated }
        #expect(await verify(token) == .rejected(.signature))
    }

    @Test func foreignIssuerIsIssuer() async throws {
        #expect(await verify(apple.minter.token { $0.claims["iss"] = .string("https://appleid.apple.com/") }) == .rejected(.issuer))
        #expect(await verify(apple.minter.token { $0.claims["iss"] = .string("https://evil.example") }) == .rejected(.issuer))
        #expect(await verify(apple.minter.token { $0.claims["iss"] = nil }) == .rejected(.issuer))
    }

    @Test func audienceOfAnotherAppIsAudience() async throws {
        #expect(await verify(apple.minter.token { $0.claims["aud"] = .string("com.other.app") }) == .rejected(.audience))
        #expect(await verify(apple.minter.token { $0.claims["aud"] = .array([.string("com.other.app")]) }) == .rejected(.audience))
        // Exact match only: case differs.
        #expect(await verify(apple.minter.token { $0.claims["aud"] = .string("COM.EXAMPLE.HERALD.IOS") }) == .rejected(.audience))
    }

    @Test func expiredBeyondLeewayIsExpired() async throws {
        let now = apple.clock.now.timeIntervalSince1970
        let token = apple.minter.token { $0.claims["iat"] = .number(now - 700); $0.claims["exp"] = .number(now - 61) }
        #expect(await verify(token) == .rejected(.expired))
    }

    @Test func issuedInTheFutureBeyondLeewayIsNotYetValid() async throws {
        let now = apple.clock.now.timeIntervalSince1970
        #expect(await verify(apple.minter.token { $0.claims["iat"] = .number(now + 61) }) == .rejected(.notYetValid))
        #expect(await verify(apple.minter.token { $0.claims["nbf"] = .number(now + 120) }) == .rejected(.notYetValid))
    }

    @Test func nonceNotMatchingTheRawNonceIsNonce() async throws {
        #expect(await verify(apple.minter.token(), defaultPolicy(rawNonce: "another-raw-nonce")) == .rejected(.nonce))
        // The claim must be lowercase hex.
        let upper = AppleTokenMinter.nonceClaim(for: AppleTokenMinter.defaultRawNonce).uppercased()
        #expect(await verify(apple.minter.token { $0.claims["nonce"] = .string(upper) }) == .rejected(.nonce))
        // The raw nonce itself in the claim is not accepted.
        #expect(await verify(apple.minter.token { $0.claims["nonce"] = .string(AppleTokenMinter.defaultRawNonce) }) == .rejected(.nonce))
    }

    @Test func requiredNonceMissingOnEitherSideIsNonce() async throws {
        #expect(await verify(apple.minter.token { $0.claims["nonce"] = nil }) == .rejected(.nonce))
        #expect(await verify(apple.minter.token(), defaultPolicy(rawNonce: nil)) == .rejected(.nonce))
        #expect(await verify(apple.minter.token(), defaultPolicy(rawNonce: "")) == .rejected(.nonce))
    }

    @Test func oneNonceWithoutTheOtherIsNonceEvenWhenNotRequired() async throws {
        let optional = defaultPolicy(nonceRequired: false, rawNonce: nil)
        #expect(await verify(apple.minter.token(), optional) == .rejected(.nonce))
        let rawOnly = defaultPolicy(nonceRequired: false, rawNonce: "raw")
        #expect(await verify(apple.minter.token { $0.claims["nonce"] = nil }, rawOnly) == .rejected(.nonce))
        // Both present and matching still passes without the requirement.
        #expect(await verify(apple.minter.token(), defaultPolicy(nonceRequired: false)).claims != nil)
    }

    // MARK: order

    @Test func firstFailingCheckInContractOrderIsTheReason() async throws {
        let now = apple.clock.now.timeIntervalSince1970
        // signature before issuer, issuer before audience, audience before expiry, expiry before nonce.
        let many = apple.minter.token {
            $0.claims["iss"] = .string("https://evil.example")
            $0.claims["aud"] = .string("com.other.app")
            $0.claims["exp"] = .number(now - 3600)
            $0.claims["nonce"] = .string("0000")
        }
        #expect(await verify(many) == .rejected(.issuer))
        let tampered = apple.minter.token { $0.claims["iss"] = .string("https://evil.example"); $0.tamperSignature = true }
        #expect(await verify(tampered) == .rejected(.signature))
        let audienceAndExpiry = apple.minter.token {
            $0.claims["aud"] = .string("com.other.app")
            $0.claims["exp"] = .number(now - 3600)
        }
        #expect(await verify(audienceAndExpiry) == .rejected(.audience))
        let expiredAndNonce = apple.minter.token {
            $0.claims["exp"] = .number(now - 3600)
            $0.claims["nonce"] = .string("0000")
        }
        #expect(await verify(expiredAndNonce) == .rejected(.expired))
    }

    @Test func everyRejectionReasonRawValueMatchesTheContract() {
        #expect(AppleRejectionReason.allCases.map(\.rawValue) == [
            "malformed", "algorithm", "unknown_key", "signature", "issuer",
            "audience", "expired", "not_yet_valid", "nonce", "replayed",
        ])
    }
}

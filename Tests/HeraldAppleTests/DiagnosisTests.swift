import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import Testing

@Suite("Apple token diagnosis", .timeLimit(.minutes(1)))
struct DiagnosisTests {
    let apple = OfflineApple()
    let audiences: Set<String> = [AppleTokenMinter.defaultAudience]

    func diagnose(_ token: String, rawNonce: String? = AppleTokenMinter.defaultRawNonce) async -> AppleTokenDiagnosisReport {
        await AppleTokenDiagnosis.diagnose(token: token, audiences: audiences, rawNonce: rawNonce,
                                           keys: apple.keys, now: apple.clock.now)
    }

    func parsedJSON(_ report: AppleTokenDiagnosisReport) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
    }

    @Test func validTokenReportListsEveryCheckAndNoSignature() async throws {
        let token = apple.minter.token()
        let report = await diagnose(token)
        #expect(report.verdict == "valid")
        #expect(report.reason == nil)
        #expect(report.exitCode == 0)
        #expect(report.checks.map(\.name) == AppleCheckName.allCases)
        let json = try parsedJSON(report)
        #expect(Array(json.keys).sorted() == ["checks", "claims", "header", "reason", "verdict"])
        #expect(json["verdict"] as? String == "valid")
        #expect(json["reason"] is NSNull)
        let header = try #require(json["header"] as? [String: Any])
        #expect(header["kid"] as? String == sharedKeys.rsaKeyID)
        #expect(header["alg"] as? String == "RS256")
        let claims = try #require(json["claims"] as? [String: Any])
        #expect(claims["sub"] as? String == AppleTokenMinter.defaultSubject)
        let checks = try #require(json["checks"] as? [[String: Any]])
        let signature = try #require(checks.first { $0["name"] as? String == "signature" })
        #expect(signature["passed"] as? Bool == true)
        #expect((signature["detail"] as? String)?.isEmpty == false)
        // What each check established, worded only now that the report reads it.
        let details = Dictionary(uniqueKeysWithValues: report.checks.map { ($0.name, $0.outcome.detail) })
        let kid = sharedKeys.rsaKeyID
        #expect(details[.algorithm]?.hasPrefix("alg RS256 fits key \"\(kid)\" (RSA ") == true)
        #expect(details[.key]?.hasPrefix("kid \"\(kid)\" found (RSA ") == true)
        #expect(details[.signature] == "RS256 signature verifies")
        #expect(details[.issuer] == "iss is https://appleid.apple.com")
        #expect(details[.audience] == "aud \"\(AppleTokenMinter.defaultAudience)\" is accepted")
        #expect(details[.expiry]?.hasPrefix("exp ") == true && details[.expiry]?.contains(" s after now (leeway ") == true)
        #expect(details[.issuedAt]?.hasSuffix(" is not in the future") == true)
        // Replay is not checked in diagnosis, and says so.
        let replay = try #require(checks.first { $0["name"] as? String == "replay" })
        #expect(replay["passed"] is NSNull)
        #expect(replay["skipped"] as? Bool == true)
        // Never the signature, never the raw nonce.
        let signatureSegment = String(token.split(separator: ".")[2])
        #expect(!report.json().contains(signatureSegment))
        #expect(!report.json().contains(AppleTokenMinter.defaultRawNonce))
        // Written by JOSE's one JSON writer, indented for a terminal: reading it back and writing
        // it again gives the same bytes.
        let printed = report.json()
        #expect(printed.hasPrefix("{\n  \"checks\": [\n    {\n      \"detail\": "))
        #expect(String(decoding: try JSONValue.parse(Array(printed.utf8)).serialized(indentedBy: 2), as: UTF8.self) == printed)
    }

    @Test func diagnosisAgreesWithVerificationForEveryBrokenToken() async throws {
        let now = apple.clock.now.timeIntervalSince1970
        let cases: [(String, (inout AppleTokenSpec) -> Void)] = [
            ("valid", { _ in }),
            ("none", { $0.alg = "none" }),
            ("hs256", { $0.alg = "HS256" }),
            ("kid missing", { $0.kid = nil }),
            ("kid unknown", { $0.kid = "nope" }),
            ("alg/key mismatch", { $0.alg = "ES256"; $0.signingKey = sharedKeys.ec }),
            ("tampered", { $0.tamperSignature = true }),
            ("issuer", { $0.claims["iss"] = .string("https://evil.example") }),
            ("audience", { $0.claims["aud"] = .string("com.other") }),
            ("expired", { $0.claims["exp"] = .number(now - 61) }),
            ("future iat", { $0.claims["iat"] = .number(now + 61) }),
            ("nonce", { $0.claims["nonce"] = .string("00") }),
            ("bad bool", { $0.claims["email_verified"] = .number(1) }),
            ("issuer+tampered", { $0.claims["iss"] = .string("x"); $0.tamperSignature = true }),
        ]
        let verifier = apple.verifier()
        let policy = defaultPolicy(nonceRequired: false, audiences: audiences)
        for (name, customize) in cases {
            let token = apple.minter.token(customize)
            let verified = await verifier.verifyDeferringReplay(token: token, policy: policy).result
            let report = await diagnose(token)
            #expect(report.result == verified, "\(name)")
            #expect(report.reason == verified.rejectionReason?.rawValue, "\(name)")
            // The first failed check in the report is the verdict's reason.
            #expect(report.checks.first { $0.outcome.failureReason != nil }?.outcome.failureReason == verified.rejectionReason, "\(name)")
        }
    }

    /// Issue #19: `exp: 1e+20` trapped the diagnosis ("Double value cannot be converted to
    /// Int64"). Every hostile claim time is `malformed`, in verification and in diagnosis alike.
    @Test func hostileNumericClaimsAreMalformedNeverATrap() async throws {
        let hostile: [Double] = [1e20, 1e308, -1e308, 9.3e18, -1, 1.5, 253_402_300_800]
        let verifier = apple.verifier()
        let policy = defaultPolicy(nonceRequired: false, audiences: audiences)
        for claim in ["exp", "iat", "nbf", "auth_time"] {
            for value in hostile {
                let token = apple.minter.token { $0.claims[claim] = .number(value) }
                let verified = await verifier.verifyDeferringReplay(token: token, policy: policy).result
                #expect(verified.rejectionReason == .malformed, "\(claim)=\(value)")
                let report = await diagnose(token)
                #expect(report.reason == "malformed", "\(claim)=\(value)")
                #expect(report.exitCode == 1, "\(claim)=\(value)")
            }
        }
        // The issue's token, byte for byte: an unsigned structure is decoded before any key is needed.
        let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"rsa1"}"#.utf8))
        let payload = Base64URL.encode(Array(#"{"iss":"https://appleid.apple.com","aud":"com.acme.ios","sub":"x","iat":0,"exp":1e+20}"#.utf8))
        let report = await AppleTokenDiagnosis.diagnose(token: "\(header).\(payload).AAAA", audiences: ["com.acme.ios"],
                                                       rawNonce: nil, keys: apple.keys, now: apple.clock.now)
        #expect(report.reason == "malformed")
        #expect(report.exitCode == 1)
    }

    @Test func laterChecksStillRunAfterTheFirstFailure() async throws {
        let token = apple.minter.token { $0.tamperSignature = true; $0.claims["aud"] = .string("com.other") }
        let report = await diagnose(token)
        #expect(report.reason == "signature")
        let audience = try #require(report.checks.first { $0.name == .audience })
        #expect(audience.outcome.failureReason == .audience)
    }

    @Test func withoutNonceATokenWithoutNonceClaimPasses() async throws {
        let report = await diagnose(apple.minter.token { $0.claims["nonce"] = nil }, rawNonce: nil)
        #expect(report.verdict == "valid")
        let withClaim = await diagnose(apple.minter.token(), rawNonce: nil)
        #expect(withClaim.reason == "nonce")
    }

    @Test func malformedTokenReportsNullHeaderAndSkipsTheRest() async throws {
        let report = await diagnose("not-a-token")
        #expect(report.reason == "malformed")
        #expect(report.header == nil)
        #expect(report.checks.count == AppleCheckName.allCases.count)
        #expect(report.checks.dropFirst().allSatisfy { if case .skipped = $0.outcome { true } else { false } })
        let json = try parsedJSON(report)
        #expect(json["header"] is NSNull)
        #expect(json["claims"] is NSNull)
    }

    @Test func unavailableJWKSReportsAppleUnavailable() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        server.setBehaviour(.status(500))
        let cache = AppleJWKSCache(configuration: .init(url: server.url), now: { Date() })
        let report = await AppleTokenDiagnosis.diagnose(token: apple.minter.token(), audiences: audiences,
                                                        rawNonce: AppleTokenMinter.defaultRawNonce, keys: cache, now: apple.clock.now)
        #expect(report.reason == "apple_unavailable")
        #expect(report.verdict == "rejected")
        #expect(report.exitCode == 3)
    }
}

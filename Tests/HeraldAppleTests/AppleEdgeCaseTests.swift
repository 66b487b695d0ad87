import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import Testing

/// Hostile shapes of otherwise well-signed Apple tokens, beyond VerificationTests' one case
/// per reason: structure around a real signature, parser differentials (duplicate or
/// escaped-duplicate members under a valid signature), claim types other libraries coerce,
/// and signatures of the wrong length or encoding.
@Suite("Apple identity token edge cases")
struct AppleEdgeCaseTests {
    let apple = OfflineApple()

    func verify(_ token: String) async -> AppleVerificationResult {
        await apple.verifier().verifyDeferringReplay(token: token, policy: defaultPolicy()).result
    }

    /// A token over raw header and payload JSON text (so members can repeat), signed correctly.
    func signedToken(header: String, payload: String, key: PrivateKey = sharedKeys.rsa,
                     algorithm: JWSAlgorithm = .rs256) throws -> String {
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
        let signature = try key.sign(message: Array(signingInput.utf8), algorithm: algorithm)
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The minter's valid claims as JSON text without the closing brace, so a test can append members.
    func validClaimsPrefix(dropping names: Set<String> = []) -> String {
        var claims = apple.minter.validSpec().claims
        for name in names { claims[name] = nil }
        let text = String(decoding: JSONValue.object(claims).serialized(), as: UTF8.self)
        return String(text.dropLast())
    }

    var rsaHeader: String { #"{"alg":"RS256","kid":"\#(sharedKeys.rsaKeyID)"}"# }

    @Test func handBuiltTokenOverValidClaimsIsAccepted() async throws {
        // Guards the helpers below: without a change, their tokens verify.
        let token = try signedToken(header: rsaHeader, payload: validClaimsPrefix() + "}")
        #expect(await verify(token).claims != nil)
    }

    @Test func validTokenWithAFourthSegmentOrWithoutItsSignatureIsMalformed() async throws {
        let token = apple.minter.token()
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        #expect(parts.count == 3)
        #expect(await verify(token + "." + parts[2]) == .rejected(.malformed))
        #expect(await verify(token + ".") == .rejected(.malformed))
        #expect(await verify(parts[0] + "." + parts[1]) == .rejected(.malformed))
        #expect(await verify(parts[0] + "." + parts[1] + ".." + parts[2]) == .rejected(.malformed))
    }

    @Test func headerOver4KiBIsMalformedEvenWhenTheTokenIsUnder16KiB() async throws {
        let token = apple.minter.token { $0.extraHeader["x5u-padding"] = .string(String(repeating: "p", count: 4_000)) }
        #expect(token.utf8.count < AppleIdentityVerifier.maximumTokenBytes)
        #expect(await verify(token) == .rejected(.malformed))
    }

    @Test(arguments: [
        // Ours first, another app's second: parsers that keep the first or the last disagree.
        #","aud":"com.other.app"}"#,
        // The same member spelled with an escape is still the same member.
        #","\u0061ud":"com.other.app"}"#,
        #","s\u0075b":"001234.attacker.0001"}"#,
        #","exp":9999999999}"#,
    ])
    func duplicateClaimUnderAValidSignatureIsMalformed(duplicate: String) async throws {
        let token = try signedToken(header: rsaHeader, payload: validClaimsPrefix() + duplicate)
        #expect(await verify(token) == .rejected(.malformed))
    }

    @Test func anotherAudienceFollowedByOursIsMalformedNotAccepted() async throws {
        // A last-wins parser would read our audience and accept the token.
        let payload = validClaimsPrefix(dropping: ["aud"]) + #","aud":"com.other.app","aud":"\#(AppleTokenMinter.defaultAudience)"}"#
        #expect(await verify(try signedToken(header: rsaHeader, payload: payload)) == .rejected(.malformed))
    }

    @Test func duplicateHeaderMemberUnderAValidSignatureIsMalformed() async throws {
        let header = #"{"alg":"RS256","kid":"\#(sharedKeys.rsaKeyID)","kid":"\#(sharedKeys.ecKeyID)"}"#
        #expect(await verify(try signedToken(header: header, payload: validClaimsPrefix() + "}")) == .rejected(.malformed))
        let escaped = #"{"alg":"RS256","\u0061lg":"none","kid":"\#(sharedKeys.rsaKeyID)"}"#
        #expect(await verify(try signedToken(header: escaped, payload: validClaimsPrefix() + "}")) == .rejected(.malformed))
    }

    @Test(arguments: [JSONValue.string("1700000600"), .null, .bool(true), .array([.number(1_700_000_600)]),
                      .object(["seconds": .number(1_700_000_600)])])
    func expThatIsNotANumberIsMalformed(exp: JSONValue) async throws {
        // Some JWT libraries coerce a numeric string; Herald must not.
        #expect(await verify(apple.minter.token { $0.claims["exp"] = exp }) == .rejected(.malformed))
    }

    @Test func expInAnExponentFormIsStillATimeButAFractionIsMalformed() async throws {
        // 1.7e9-style times are valid JSON numbers naming whole seconds; the lifetime check
        // decides. Apple issues whole seconds, and issue #19 makes a fraction `malformed`.
        let issued = apple.clock.now.timeIntervalSince1970.rounded(.down)
        let fraction = try signedToken(header: rsaHeader,
                                       payload: validClaimsPrefix(dropping: ["exp"]) + #","exp":\#(Int(issued) + 600).5}"#)
        #expect(await verify(fraction) == .rejected(.malformed))
        let exponent = try signedToken(header: rsaHeader,
                                       payload: validClaimsPrefix(dropping: ["exp"]) + #","exp":\#(Int(issued) + 600)e0}"#)
        #expect(await verify(exponent).claims != nil)
        let farPast = try signedToken(header: rsaHeader, payload: validClaimsPrefix(dropping: ["exp"]) + #","exp":1e2}"#)
        #expect(await verify(farPast) == .rejected(.expired))
    }

    @Test(arguments: [-1, 1, 256])
    func rs256SignatureOfTheWrongLengthIsSignature(lengthChange: Int) async throws {
        let token = apple.minter.token()
        let parts = token.split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(parts[2]))
        #expect(signature.count == 256)
        if lengthChange < 0 { signature.removeLast(-lengthChange) } else { signature += signature.prefix(lengthChange) }
        let changed = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
        #expect(await verify(changed) == .rejected(.signature))
    }

    @Test func es256SignatureInDERFormOrOfTheWrongLengthIsSignature() async throws {
        let token = apple.minter.token { $0.alg = "ES256"; $0.kid = sharedKeys.ecKeyID; $0.signingKey = sharedKeys.ec }
        #expect(await verify(token).claims != nil)
        let parts = token.split(separator: ".").map(String.init)
        let raw = try #require(Base64URL.decode(parts[2]))
        #expect(raw.count == 64)
        func withSignature(_ bytes: [UInt8]) -> String { parts[0] + "." + parts[1] + "." + Base64URL.encode(bytes) }
        // The same (r, s) as DER, which OpenSSL itself would accept: JOSE requires raw r‖s.
        #expect(await verify(withSignature(Self.der(r: Array(raw[..<32]), s: Array(raw[32...])))) == .rejected(.signature))
        #expect(await verify(withSignature(Array(raw.dropLast()))) == .rejected(.signature))
        #expect(await verify(withSignature(raw + [0])) == .rejected(.signature))
        #expect(await verify(withSignature([UInt8](repeating: 0, count: 64))) == .rejected(.signature))
    }

    @Test func critNamingAPresentHeaderMemberIsMalformed() async throws {
        // Even a listed extension the header actually carries (RFC 7797's b64) is not understood.
        let token = apple.minter.token { $0.extraHeader["crit"] = .array([.string("b64")]); $0.extraHeader["b64"] = .bool(false) }
        #expect(await verify(token) == .rejected(.malformed))
    }

    /// DER `SEQUENCE { INTEGER r, INTEGER s }` of two 32-byte big-endian integers.
    static func der(r: [UInt8], s: [UInt8]) -> [UInt8] {
        func integer(_ bytes: [UInt8]) -> [UInt8] {
            var trimmed = Array(bytes.drop { $0 == 0 })
            if trimmed.isEmpty || trimmed[0] & 0x80 != 0 { trimmed.insert(0, at: 0) }
            return [0x02, UInt8(trimmed.count)] + trimmed
        }
        let body = integer(r) + integer(s)
        return [0x30, UInt8(body.count)] + body
    }
}

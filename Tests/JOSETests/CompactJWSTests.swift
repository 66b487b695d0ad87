import Testing
import JOSE

@Suite("Compact JWS parsing, signing and verification")
struct CompactJWSTests {
    private static let validHeader = Base64URL.encode(Array(#"{"alg":"ES256","kid":"k1"}"#.utf8))
    private static let validPayload = Base64URL.encode(Array(#"{"sub":"123"}"#.utf8))
    private static let someSignature = Base64URL.encode([UInt8](repeating: 7, count: 64))

    private static func segment(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }

    private func expectMalformed(_ compact: String, maxLength: Int = CompactJWS.defaultMaxLength,
                                 sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: JOSEError.self, sourceLocation: sourceLocation) {
            try CompactJWS(parsing: compact, maxLength: maxLength)
        }
        #expect(error?.code == .malformed, sourceLocation: sourceLocation)
    }

    @Test func parsesAWellFormedToken() throws {
        let compact = [Self.validHeader, Self.validPayload, Self.someSignature].joined(separator: ".")
        let jws = try CompactJWS(parsing: compact)
        #expect(jws.header == JOSEHeader(alg: "ES256", kid: "k1"))
        #expect(jws.headerFields["kid"] == .string("k1"))
        #expect(jws.payloadBytes == Array(#"{"sub":"123"}"#.utf8))
        #expect(jws.signingInput == Array((Self.validHeader + "." + Self.validPayload).utf8))
        #expect(jws.signature == [UInt8](repeating: 7, count: 64))
        #expect(try jws.payloadObject() == ["sub": .string("123")])
    }

    @Test func rejectsWrongSegmentCounts() {
        expectMalformed(Self.validHeader + "." + Self.validPayload)
        expectMalformed([Self.validHeader, Self.validPayload, Self.someSignature, Self.someSignature].joined(separator: "."))
        expectMalformed([Self.validHeader, Self.validPayload, Self.someSignature, "", ""].joined(separator: "."))
        expectMalformed("")
        expectMalformed("..")
    }

    @Test func rejectsOversizedTokensAndHeaders() throws {
        let bigHeader = Self.segment(#"{"alg":"ES256","x":""# + String(repeating: "a", count: 3_100) + #""}"#)
        #expect(bigHeader.utf8.count > CompactJWS.maxHeaderLength)
        expectMalformed([bigHeader, Self.validPayload, Self.someSignature].joined(separator: "."))

        let bigPayload = Self.segment(#"{"x":""# + String(repeating: "a", count: 13_000) + #""}"#)
        let tooLong = [Self.validHeader, bigPayload, Self.someSignature].joined(separator: ".")
        #expect(tooLong.utf8.count > CompactJWS.defaultMaxLength)
        expectMalformed(tooLong)
        _ = try CompactJWS(parsing: tooLong, maxLength: 32_768)

        let normal = [Self.validHeader, Self.validPayload, Self.someSignature].joined(separator: ".")
        expectMalformed(normal, maxLength: normal.utf8.count - 1)
        _ = try CompactJWS(parsing: normal, maxLength: normal.utf8.count)
    }

    @Test func rejectsNonStrictBase64URLInAnySegment() {
        expectMalformed([Self.validHeader + "=", Self.validPayload, Self.someSignature].joined(separator: "."))
        expectMalformed([Self.validHeader, Self.validPayload + " ", Self.someSignature].joined(separator: "."))
        expectMalformed([Self.validHeader, Self.validPayload, Self.someSignature + "=="].joined(separator: "."))
        expectMalformed([Self.validHeader, Self.validPayload, "a+b/"].joined(separator: "."))
    }

    @Test(arguments: [#"["ES256"]"#, #""ES256""#, "42", "null", "true", "not json", ""])
    func rejectsHeaderThatIsNotAJSONObject(header: String) {
        expectMalformed([Self.segment(header), Self.validPayload, Self.someSignature].joined(separator: "."))
    }

    @Test(arguments: [#"["sub"]"#, #""claims""#, "123", "null", "Example of Ed25519 signing"])
    func rejectsPayloadThatIsNotAJSONObject(payload: String) {
        expectMalformed([Self.validHeader, Self.segment(payload), Self.someSignature].joined(separator: "."))
    }

    @Test func rejectsDuplicateKeysInHeaderOrPayload() {
        // Two parsers must never disagree on which "alg" or "sub" a token carries.
        expectMalformed([Self.segment(#"{"alg":"ES256","alg":"none"}"#), Self.validPayload, Self.someSignature].joined(separator: "."))
        expectMalformed([Self.validHeader, Self.segment(#"{"sub":"a","sub":"b"}"#), Self.someSignature].joined(separator: "."))
    }

    @Test(arguments: [#"{}"#, #"{"alg":5}"#, #"{"alg":null}"#, #"{"alg":"ES256","kid":7}"#, #"{"alg":"ES256","typ":true}"#,
                      #"{"alg":"ES256","crit":[]}"#, #"{"alg":"ES256","crit":"exp"}"#, #"{"alg":"ES256","crit":[1]}"#])
    func rejectsHeaderWithMissingOrMistypedRegisteredMembers(header: String) {
        expectMalformed([Self.segment(header), Self.validPayload, Self.someSignature].joined(separator: "."))
    }

    @Test(arguments: JWSAlgorithm.allCases)
    func signedTokenParsesAndVerifies(algorithm: JWSAlgorithm) throws {
        let key = try PrivateKey.generate(for: algorithm)
        let payload = JSONValue.object(["sub": "acct-1", "exp": 2_000_000_000]).serialized()
        let compact = try CompactJWS.sign(header: JOSEHeader(algorithm: algorithm, kid: "k1", typ: "at+jwt"), payload: payload, key: key)
        let jws = try CompactJWS(parsing: compact)
        #expect(jws.header == JOSEHeader(alg: algorithm.rawValue, kid: "k1", typ: "at+jwt"))
        #expect(jws.verify(with: key.publicKey))
        #expect(try jws.payloadObject()["exp"]?.int64Value == 2_000_000_000)

        // Same header and signature over a different payload must fail.
        let forgedPayload = JSONValue.object(["sub": "acct-2", "exp": 2_000_000_000]).serialized()
        let parts = compact.split(separator: ".")
        let forged = try CompactJWS(parsing: [String(parts[0]), Base64URL.encode(forgedPayload), String(parts[2])].joined(separator: "."))
        #expect(!forged.verify(with: key.publicKey))
        #expect(!jws.verify(with: try PrivateKey.generate(for: algorithm).publicKey))
    }

    @Test(arguments: ["none", "HS256", "RS512", "ES384", "Ed25519", "rs256", ""])
    func unsupportedAlgorithmsNeverVerify(alg: String) throws {
        // The RFC 7515 A.2 token re-labelled: correct RSA signature, but the header names another alg.
        let original = try CompactJWS(parsing: RFCVectors.rs256Compact)
        let relabelled = [Self.segment(#"{"alg":"\#(alg)"}"#), RFCVectors.payloadSegment, Base64URL.encode(original.signature)]
            .joined(separator: ".")
        let jws = try CompactJWS(parsing: relabelled)
        #expect(jws.algorithm == nil)
        #expect(!jws.verify(with: try RFCVectors.rsaPublicJWK.publicKey()))

        let signingError = #expect(throws: JOSEError.self) {
            try CompactJWS.sign(header: JOSEHeader(alg: alg), payload: [], key: try PrivateKey(pkcs8DER: RFCVectors.rsaPrivatePKCS8))
        }
        #expect(signingError?.code == .unsupportedAlgorithm)
    }

    @Test func emptySignatureParsesButNeverVerifies() throws {
        let jws = try CompactJWS(parsing: Self.segment(#"{"alg":"ES256"}"#) + "." + Self.validPayload + ".")
        #expect(jws.signature.isEmpty)
        #expect(!jws.verify(with: try RFCVectors.ecPublicJWK.publicKey()))
    }
}

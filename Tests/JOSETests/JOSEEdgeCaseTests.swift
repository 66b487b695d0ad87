import Testing
import JOSE

/// Boundaries and hostile shapes the per-feature suites do not cover: the header cap's exact
/// edge, duplicate members spelled with escapes, bytes outside the base64url alphabet,
/// signatures of the wrong length for every algorithm, and critical extensions.
@Suite("JOSE edge cases")
struct JOSEEdgeCaseTests {
    static let payload = Base64URL.encode(Array(#"{"sub":"123"}"#.utf8))
    static let signature = Base64URL.encode([UInt8](repeating: 7, count: 64))

    static func compact(header: String, payload: String = JOSEEdgeCaseTests.payload,
                        signature: String = JOSEEdgeCaseTests.signature) -> String {
        [Base64URL.encode(Array(header.utf8)), payload, signature].joined(separator: ".")
    }

    func expectMalformed(_ compact: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let error = #expect(throws: JOSEError.self, sourceLocation: sourceLocation) { try CompactJWS(parsing: compact) }
        #expect(error?.code == .malformed, sourceLocation: sourceLocation)
    }

    /// A header JSON whose base64url encoding is exactly `encodedLength` characters.
    static func header(encodedLength: Int) -> String {
        // {"alg":"ES256","p":"…"} is 22 bytes plus the padding; base64url makes 3 bytes 4 chars.
        let jsonLength = encodedLength / 4 * 3
        precondition(encodedLength % 4 == 0)
        return #"{"alg":"ES256","p":""# + String(repeating: "x", count: jsonLength - 22) + #""}"#
    }

    @Test func headerExactlyAtTheCapParsesAndOneBlockMoreIsMalformed() throws {
        let atCap = Self.header(encodedLength: CompactJWS.maxHeaderLength)
        #expect(Base64URL.encode(Array(atCap.utf8)).utf8.count == CompactJWS.maxHeaderLength)
        #expect(try CompactJWS(parsing: Self.compact(header: atCap)).header.alg == "ES256")
        let overCap = Self.header(encodedLength: CompactJWS.maxHeaderLength + 4)
        expectMalformed(Self.compact(header: overCap))
    }

    @Test(arguments: [
        #"{"alg":"ES256","\u0061lg":"none"}"#,     // "alg" twice, once escaped
        #"{"alg":"ES256","kid":"a","k\u0069d":"b"}"#,
        #"{"alg":"ES256","crit":["x"],"cr\u0069t":[]}"#,
    ])
    func headerMembersDuplicatedThroughEscapesAreMalformed(header: String) {
        expectMalformed(Self.compact(header: header))
    }

    @Test func payloadMembersDuplicatedThroughEscapesAreMalformed() {
        let payload = Base64URL.encode(Array(#"{"sub":"a","s\u0075b":"b"}"#.utf8))
        expectMalformed(Self.compact(header: #"{"alg":"ES256"}"#, payload: payload))
        let nested = Base64URL.encode(Array(#"{"sub":"a","x":{"exp":1,"\u0065xp":2}}"#.utf8))
        expectMalformed(Self.compact(header: #"{"alg":"ES256"}"#, payload: nested))
    }

    @Test(arguments: ["é", "\u{0}", " ", "\t", "\n", "\r\n", "%41", "\u{FEFF}"])
    func bytesOutsideTheBase64URLAlphabetAnywhereAreMalformed(intruder: String) {
        let valid = Self.compact(header: #"{"alg":"ES256"}"#)
        let parts = valid.split(separator: ".").map(String.init)
        expectMalformed(intruder + valid)
        expectMalformed(valid + intruder)
        expectMalformed(parts[0] + "." + String(parts[1].prefix(4)) + intruder + String(parts[1].dropFirst(4)) + "." + parts[2])
    }

    @Test(arguments: [JWSAlgorithm.rs256, .edDSA])
    func signaturesOfTheWrongLengthNeverVerify(algorithm: JWSAlgorithm) throws {
        // ES256 has its own test (KeyTests); RSA and Ed25519 signatures have fixed sizes too.
        let key = try PrivateKey.generate(for: algorithm)
        let compact = try CompactJWS.sign(header: JOSEHeader(algorithm: algorithm, kid: "k"), payload: Array(#"{"a":1}"#.utf8), key: key)
        let jws = try CompactJWS(parsing: compact)
        #expect(jws.verify(with: key.publicKey))
        let parts = compact.split(separator: ".").map(String.init)
        let signature = jws.signature
        for wrong in [Array(signature.dropLast()), signature + [0], [0] + signature, signature + signature, []] {
            let changed = try CompactJWS(parsing: parts[0] + "." + parts[1] + "." + Base64URL.encode(wrong))
            #expect(!changed.verify(with: key.publicKey), "\(wrong.count)-byte signature verified")
        }
    }

    @Test func criticalExtensionsAreExposedAndNeverVerify() throws {
        // RFC 7515 §4.1.11: a recipient that does not understand a listed extension must
        // refuse the JWS. Herald understands none, so even a correct signature is refused.
        let key = try PrivateKey.generate(for: .es256)
        let header = JOSEHeader(alg: "ES256", kid: "k", crit: ["b64"])
        let compact = try CompactJWS.sign(header: header, payload: Array(#"{"a":1}"#.utf8), key: key)
        let jws = try CompactJWS(parsing: compact)
        #expect(jws.header.crit == ["b64"])
        #expect(!jws.verify(with: key.publicKey))
        #expect(key.publicKey.verify(signature: jws.signature, message: jws.signingInput, algorithm: .es256),
                "the signature itself is correct: only the crit header refuses it")
    }

    @Test(arguments: [JSONValue.string("1700000000"), .bool(true), .null, .number(1.5), .number(1e19), .number(-1e19),
                      .array([.number(1)])])
    func timeClaimsThatAreNotIntegersHaveNoInt64Value(value: JSONValue) {
        #expect(value.int64Value == nil)
    }

    @Test func timeClaimsInExponentFormAreIntegers() throws {
        #expect(try JSONValue.parse(Array("1.7e9".utf8)).int64Value == 1_700_000_000)
        #expect(try JSONValue.parse(Array("-0".utf8)).int64Value == 0)
    }
}

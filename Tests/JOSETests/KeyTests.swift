import Foundation
import Testing
import JOSE

@Suite("Keys, JWK and JWKS")
struct KeyTests {
    private static let message = Array("header.payload".utf8)

    // MARK: Algorithm and key type must agree

    @Test(arguments: JWSAlgorithm.allCases)
    func verifyIsFalseWhenAlgorithmDoesNotFitKeyType(algorithm: JWSAlgorithm) throws {
        let key = try PrivateKey.generate(for: algorithm)
        let signature = try key.sign(message: Self.message, algorithm: algorithm)
        #expect(key.publicKey.verify(signature: signature, message: Self.message, algorithm: algorithm))
        for other in JWSAlgorithm.allCases where other != algorithm {
            #expect(!key.publicKey.verify(signature: signature, message: Self.message, algorithm: other), "\(other) on \(key.keyType)")
            let error = #expect(throws: JOSEError.self) { try key.sign(message: Self.message, algorithm: other) }
            #expect(error?.code == .keyAlgorithmMismatch)
        }
    }

    @Test func generatedKeysHaveTheExpectedTypesAndSignatureSizes() throws {
        let rsa = try PrivateKey.generate(for: .rs256)
        #expect(rsa.keyType == .rsa(bits: 2048))
        #expect(try rsa.sign(message: Self.message, algorithm: .rs256).count == 256)
        let ec = try PrivateKey.generate(for: .es256)
        #expect(ec.keyType == .ecP256)
        #expect(ec.publicKey.keyType == .ecP256)
        for _ in 0..<20 {  // r or s with leading zeros must still be padded to 32 bytes each
            #expect(try ec.sign(message: Self.message, algorithm: .es256).count == 64)
        }
        let ed = try PrivateKey.generate(for: .edDSA)
        #expect(ed.keyType == .ed25519)
        #expect(try ed.sign(message: Self.message, algorithm: .edDSA).count == 64)
        #expect(KeyType.rsa(bits: 3072).algorithm == .rs256)
    }

    @Test func es256SignatureMustBeExactly64RawBytes() throws {
        let key = try PrivateKey.generate(for: .es256)
        let signature = try key.sign(message: Self.message, algorithm: .es256)
        #expect(key.publicKey.verify(signature: signature, message: Self.message, algorithm: .es256))
        #expect(!key.publicKey.verify(signature: signature + [0], message: Self.message, algorithm: .es256))
        #expect(!key.publicKey.verify(signature: Array(signature.dropLast()), message: Self.message, algorithm: .es256))
        #expect(!key.publicKey.verify(signature: [0] + signature, message: Self.message, algorithm: .es256))
        #expect(!key.publicKey.verify(signature: [], message: Self.message, algorithm: .es256))
        #expect(!key.publicKey.verify(signature: [UInt8](repeating: 0, count: 64), message: Self.message, algorithm: .es256))
    }

    @Test func emptyMessagesSignAndVerify() throws {
        for algorithm in JWSAlgorithm.allCases {
            let key = try PrivateKey.generate(for: algorithm)
            let signature = try key.sign(message: [], algorithm: algorithm)
            #expect(key.publicKey.verify(signature: signature, message: [], algorithm: algorithm))
            #expect(!key.publicKey.verify(signature: signature, message: [0], algorithm: algorithm))
        }
    }

    // MARK: JWK import / export

    @Test(arguments: JWSAlgorithm.allCases)
    func jwkRoundTripsThroughJSONAndStillVerifies(algorithm: JWSAlgorithm) throws {
        let key = try PrivateKey.generate(for: algorithm)
        let jwk = key.publicKey.jwk(keyID: "kid-1")
        #expect(jwk.kid == "kid-1")
        #expect(jwk.use == "sig")
        #expect(jwk.alg == algorithm.rawValue)
        let decoded = try JSONDecoder().decode(JWK.self, from: JSONEncoder().encode(jwk))
        #expect(decoded == jwk)
        let imported = try decoded.publicKey()
        #expect(imported.keyType == key.keyType)
        #expect(imported.jwk(keyID: "kid-1") == jwk)
        #expect(imported.thumbprint() == key.publicKey.thumbprint())
        let signature = try key.sign(message: Self.message, algorithm: algorithm)
        #expect(imported.verify(signature: signature, message: Self.message, algorithm: algorithm))
    }

    @Test func exportedJWKMembersHaveFixedSizes() throws {
        let ec = try PrivateKey.generate(for: .es256).publicKey.jwk(keyID: nil)
        #expect(ec.kty == "EC" && ec.crv == "P-256")
        #expect(Base64URL.decode(ec.x!)?.count == 32 && Base64URL.decode(ec.y!)?.count == 32)
        let rsa = try PrivateKey.generate(for: .rs256).publicKey.jwk(keyID: nil)
        #expect(rsa.kty == "RSA" && rsa.e == "AQAB" && Base64URL.decode(rsa.n!)?.count == 256)
        let ed = try PrivateKey.generate(for: .edDSA).publicKey.jwk(keyID: nil)
        #expect(ed.kty == "OKP" && ed.crv == "Ed25519" && Base64URL.decode(ed.x!)?.count == 32 && ed.y == nil)
    }

    @Test func rsaKeysBelow2048BitsAreRejected() throws {
        let n1024 = [0xC3] + [UInt8](repeating: 0x5A, count: 126) + [0x5B]
        let error1024 = #expect(throws: JOSEError.self) { try JWK(kty: "RSA", n: Base64URL.encode(n1024), e: "AQAB").publicKey() }
        #expect(error1024?.code == .keyTooSmall)

        let n2047 = [0x7F] + [UInt8](repeating: 0x5A, count: 254) + [0x5B]
        let error2047 = #expect(throws: JOSEError.self) { try JWK(kty: "RSA", n: Base64URL.encode(n2047), e: "AQAB").publicKey() }
        #expect(error2047?.code == .keyTooSmall)

        let n2048 = [0x80] + [UInt8](repeating: 0x5A, count: 254) + [0x5B]
        #expect(try JWK(kty: "RSA", n: Base64URL.encode(n2048), e: "AQAB").publicKey().keyType == .rsa(bits: 2048))
        // A leading zero octet (emitted by some libraries) does not change the size.
        #expect(try JWK(kty: "RSA", n: Base64URL.encode([0] + n2048), e: "AQAB").publicKey().keyType == .rsa(bits: 2048))
    }

    @Test func invalidRSAExponentsAreRejected() {
        for e in ["", "AQ", "AAE", "AQAA", Base64URL.encode([UInt8](repeating: 1, count: 9))] {
            #expect(throws: JOSEError.self, "e=\(e)") { try JWK(kty: "RSA", n: RFCVectors.rsaN, e: e).publicKey() }
        }
    }

    @Test func ecPointsOffTheCurveOrOfWrongSizeAreRejected() throws {
        var y = Base64URL.decode(RFCVectors.ecY)!
        y[31] ^= 0x01
        let offCurve = #expect(throws: JOSEError.self) {
            try JWK(kty: "EC", crv: "P-256", x: RFCVectors.ecX, y: Base64URL.encode(y)).publicKey()
        }
        #expect(offCurve?.code == .invalidKey)

        let zeros = Base64URL.encode([UInt8](repeating: 0, count: 32))
        #expect(throws: JOSEError.self) { try JWK(kty: "EC", crv: "P-256", x: zeros, y: zeros).publicKey() }

        let x33 = Base64URL.encode([0] + Base64URL.decode(RFCVectors.ecX)!)
        let wrongSize = #expect(throws: JOSEError.self) { try JWK(kty: "EC", crv: "P-256", x: x33, y: RFCVectors.ecY).publicKey() }
        #expect(wrongSize?.code == .invalidKey)
    }

    @Test func unsupportedKeyTypesCurvesAndAlgorithmsAreRejected() {
        func code(_ jwk: JWK) -> JOSEError.Code? {
            #expect(throws: JOSEError.self) { try jwk.publicKey() }.map(\.code)
        }
        #expect(code(JWK(kty: "oct", x: "AAAA")) == .unsupportedKeyType)
        #expect(code(JWK(kty: "EC", crv: "P-384", x: RFCVectors.ecX, y: RFCVectors.ecY)) == .unsupportedKeyType)
        #expect(code(JWK(kty: "OKP", crv: "X25519", x: RFCVectors.edX)) == .unsupportedKeyType)
        #expect(code(JWK(kty: "RSA", alg: "RS512", n: RFCVectors.rsaN, e: "AQAB")) == .unsupportedAlgorithm)
        #expect(code(JWK(kty: "RSA", alg: "ES256", n: RFCVectors.rsaN, e: "AQAB")) == .keyAlgorithmMismatch)
        #expect(code(JWK(kty: "OKP", crv: "Ed25519", x: String(RFCVectors.edX.dropLast()))) != nil)
        #expect(code(JWK(kty: "RSA", e: "AQAB")) == .malformed)
        #expect(code(JWK(kty: "RSA", n: RFCVectors.rsaN + "=", e: "AQAB")) == .malformed)
    }

    // MARK: JWKS

    @Test func jwksSkipsMalformedAndUnsupportedEntriesWithoutFailing() throws {
        let n1024 = Base64URL.encode([0xC3] + [UInt8](repeating: 0x5A, count: 126) + [0x5B])
        let document = #"""
        {"keys":[
          {"kty":"RSA","kid":"rsa","use":"sig","alg":"RS256","n":"\#(RFCVectors.rsaN)","e":"AQAB"},
          {"kty":"EC","kid":"ec","crv":"P-256","x":"\#(RFCVectors.ecX)","y":"\#(RFCVectors.ecY)"},
          {"kty":"OKP","kid":"ed","crv":"Ed25519","x":"\#(RFCVectors.edX)"},
          {"kty":"RSA","kid":"small","n":"\#(n1024)","e":"AQAB"},
          {"kty":"EC","kid":"p384","crv":"P-384","x":"\#(RFCVectors.ecX)","y":"\#(RFCVectors.ecY)"},
          {"kty":"oct","kid":"hmac","k":"c2VjcmV0"},
          {"kty":"RSA","n":"\#(RFCVectors.rsaN)","e":"AQAB"},
          {"kty":"OKP","kid":"short","crv":"Ed25519","x":"AAAA"},
          {"kty":"RSA","kid":"enc","use":"enc","n":"\#(RFCVectors.rsaN)","e":"AQAB"},
          {"kty":"RSA","kid":"rsa","n":"\#(RFCVectors.rsaN)","e":"AQAB"},
          {"kty":"RSA","kid":"hs","alg":"HS256","n":"\#(RFCVectors.rsaN)","e":"AQAB"},
          {"kty":"RSA","kid":"padded","n":"\#(RFCVectors.rsaN)=","e":"AQAB"},
          {"kty":"RSA","kid":7,"n":"\#(RFCVectors.rsaN)","e":"AQAB"},
          {"kid":"nokty"},
          42, "key", null, []
        ]}
        """#
        let set = try JWKSet.parse(Array(document.utf8))
        #expect(Set(set.keys.keys) == ["rsa", "ec", "ed"])
        #expect(set.skippedCount == 15)
        #expect(set["ec"]?.keyType == .ecP256)
        let jws = try CompactJWS(parsing: RFCVectors.rs256Compact)
        #expect(jws.verify(with: try #require(set["rsa"])))
    }

    @Test(arguments: ["", "[]", "{}", #"{"keys":{}}"#, #"{"keys":"x"}"#, #"{"keys":[],"keys":[]}"#, "not json"])
    func jwksThrowsOnlyWhenThereIsNoKeysArray(document: String) {
        let error = #expect(throws: JOSEError.self) { try JWKSet.parse(Array(document.utf8)) }
        #expect(error?.code == .malformed)
    }

    @Test func jwksDocumentRoundTrips() throws {
        let keys = try JWSAlgorithm.allCases.map { try PrivateKey.generate(for: $0) }
        let jwks = keys.enumerated().map { $1.publicKey.jwk(keyID: "k\($0)") }
        let set = try JWKSet.parse(JWKSet.document(jwks))
        #expect(set.skippedCount == 0)
        for (index, key) in keys.enumerated() {
            let algorithm = key.keyType.algorithm
            let signature = try key.sign(message: Self.message, algorithm: algorithm)
            #expect(try #require(set["k\(index)"]).verify(signature: signature, message: Self.message, algorithm: algorithm))
        }
        let parsed = try JSONValue.parse(JWKSet.document(jwks))
        #expect(parsed["keys"]?.arrayValue?.count == 3)
    }

    // MARK: PKCS#8

    @Test func importsAppleStyleP8PEM() throws {
        // An Apple .p8 is an unencrypted PKCS#8 "PRIVATE KEY" PEM holding an EC P-256 key.
        let body = Data(RFCVectors.ecPrivatePKCS8).base64EncodedString(options: [.lineLength64Characters, .endLineWithCarriageReturn, .endLineWithLineFeed])
        let p8 = "-----BEGIN PRIVATE KEY-----\r\n\(body)\r\n-----END PRIVATE KEY-----\r\n"
        let key = try PrivateKey(pkcs8PEM: p8)
        #expect(key.keyType == .ecP256)
        #expect(key.publicKey.jwk(keyID: nil).x == RFCVectors.ecX)
        #expect(try PrivateKey(pkcs8DER: key.pkcs8DER()).publicKey.jwk(keyID: nil) == key.publicKey.jwk(keyID: nil))
    }

    @Test(arguments: JWSAlgorithm.allCases)
    func pkcs8ExportReimportsToTheSameKey(algorithm: JWSAlgorithm) throws {
        let key = try PrivateKey.generate(for: algorithm)
        let reimported = try PrivateKey(pkcs8DER: key.pkcs8DER())
        #expect(reimported.publicKey.spkiDER() == key.publicKey.spkiDER())
        let viaPEM = try PrivateKey(pkcs8PEM: key.pkcs8PEM())
        let signature = try viaPEM.sign(message: Self.message, algorithm: algorithm)
        #expect(key.publicKey.verify(signature: signature, message: Self.message, algorithm: algorithm))
        #expect(try PublicKey(spkiPEM: key.publicKey.spkiPEM()).jwk(keyID: nil) == key.publicKey.jwk(keyID: nil))
    }

    @Test func malformedPKCS8IsRejected() throws {
        let valid = RFCVectors.edPrivatePKCS8
        #expect(throws: JOSEError.self) { try PrivateKey(pkcs8DER: []) }
        #expect(throws: JOSEError.self) { try PrivateKey(pkcs8DER: Array(valid.dropLast())) }
        #expect(throws: JOSEError.self) { try PrivateKey(pkcs8DER: valid + [0]) }
        #expect(throws: JOSEError.self) { try PrivateKey(pkcs8PEM: "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----") }
        let rsaPKCS1Label = "-----BEGIN RSA PRIVATE KEY-----\n\(Data(valid).base64EncodedString())\n-----END RSA PRIVATE KEY-----"
        let error = #expect(throws: JOSEError.self) { try PrivateKey(pkcs8PEM: rsaPKCS1Label) }
        #expect(error?.code == .malformed)
        #expect(throws: JOSEError.self) { try PublicKey(spkiDER: valid) }
    }

    // MARK: Concurrency

    @Test func oneKeyVerifiesConcurrentlyFromManyTasks() async throws {
        let key = try PrivateKey.generate(for: .es256)
        let signature = try key.sign(message: Self.message, algorithm: .es256)
        let publicKey = key.publicKey
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask {
                    (0..<25).allSatisfy { _ in
                        publicKey.verify(signature: signature, message: Self.message, algorithm: .es256)
                            && !publicKey.verify(signature: signature, message: Self.message + [UInt8(index)], algorithm: .es256)
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [Bool](repeating: true, count: 16))
    }

    /// Every signature copies the key's one signing context (DigestContextTemplate): copies
    /// made at the same moment from many threads must each sign correctly.
    @Test(arguments: JWSAlgorithm.allCases)
    func oneKeySignsConcurrentlyFromManyTasks(algorithm: JWSAlgorithm) async throws {
        let key = try PrivateKey.generate(for: algorithm)
        let publicKey = key.publicKey
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<16 {
                group.addTask {
                    (0..<10).allSatisfy { round in
                        let message = Self.message + [UInt8(index), UInt8(round)]
                        guard let signature = try? key.sign(message: message, algorithm: algorithm) else { return false }
                        return publicKey.verify(signature: signature, message: message, algorithm: algorithm)
                    }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [Bool](repeating: true, count: 16))
    }
}

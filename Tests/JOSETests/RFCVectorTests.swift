import Testing
@testable import JOSE

@Suite("RFC 7515 / RFC 8037 test vectors")
struct RFCVectorTests {
    @Test func rfc7515A2SignatureVerifiesWithPublishedKey() throws {
        let key = try RFCVectors.rsaPublicJWK.publicKey()
        #expect(key.keyType == .rsa(bits: 2048))
        let (input, signature) = RFCVectors.split(RFCVectors.rs256Compact)
        #expect(key.verify(signature: signature, message: input, algorithm: .rs256))

        var tampered = signature
        tampered[100] ^= 0x01
        #expect(!key.verify(signature: tampered, message: input, algorithm: .rs256))
        #expect(!key.verify(signature: signature, message: input + [0x20], algorithm: .rs256))
    }

    @Test func rfc7515A2SigningReproducesPublishedCompactJWS() throws {
        // RS256 (PKCS#1 v1.5) is deterministic: the private key from the RFC must give its exact bytes.
        let privateKey = try PrivateKey(pkcs8DER: RFCVectors.rsaPrivatePKCS8)
        #expect(privateKey.publicKey.jwk(keyID: nil).n == RFCVectors.rsaN)

        let (input, expectedSignature) = RFCVectors.split(RFCVectors.rs256Compact)
        #expect(try privateKey.sign(message: input, algorithm: .rs256) == expectedSignature)

        let payload = Base64URL.decode(RFCVectors.payloadSegment)!
        let compact = try CompactJWS.sign(header: JOSEHeader(alg: "RS256"), payload: payload, key: privateKey)
        #expect(compact == RFCVectors.rs256Compact)
    }

    @Test func rfc7515A2ParsesIntoHeaderAndTypedClaims() throws {
        let jws = try CompactJWS(parsing: RFCVectors.rs256Compact)
        #expect(jws.header == JOSEHeader(alg: "RS256"))
        #expect(jws.algorithm == .rs256)
        let claims = try jws.payloadObject()
        #expect(claims["iss"] == .string("joe"))
        #expect(claims["exp"] == .number(1_300_819_380))
        #expect(claims["exp"]?.int64Value == 1_300_819_380)
        #expect(claims["http://example.com/is_root"] == .bool(true))
        #expect(jws.verify(with: try RFCVectors.rsaPublicJWK.publicKey()))
    }

    @Test func rfc7515A3SignatureVerifiesWithPublishedKey() throws {
        let key = try RFCVectors.ecPublicJWK.publicKey()
        #expect(key.keyType == .ecP256)
        let jws = try CompactJWS(parsing: RFCVectors.es256Compact)
        #expect(jws.signature.count == 64)
        #expect(jws.verify(with: key))
        #expect(key.verify(signature: jws.signature, message: jws.signingInput, algorithm: .es256))

        var tampered = jws.signature
        tampered[63] ^= 0x01
        #expect(!key.verify(signature: tampered, message: jws.signingInput, algorithm: .es256))
    }

    @Test func rfc7515A3PrivateKeyDerivesPublishedPublicKeyAndSignsVerifiably() throws {
        let privateKey = try PrivateKey(pkcs8DER: RFCVectors.ecPrivatePKCS8)
        #expect(privateKey.keyType == .ecP256)
        let derived = privateKey.publicKey.jwk(keyID: nil)
        #expect(derived.x == RFCVectors.ecX)
        #expect(derived.y == RFCVectors.ecY)

        // ECDSA is randomized, so check the signature against the RFC's public key instead of bytes.
        let (input, _) = RFCVectors.split(RFCVectors.es256Compact)
        let signature = try privateKey.sign(message: input, algorithm: .es256)
        #expect(signature.count == 64)
        #expect(try RFCVectors.ecPublicJWK.publicKey().verify(signature: signature, message: input, algorithm: .es256))
    }

    @Test func rfc8037A4SigningGivesPublishedSignature() throws {
        let privateKey = try PrivateKey(pkcs8DER: RFCVectors.edPrivatePKCS8)
        #expect(privateKey.keyType == .ed25519)
        #expect(privateKey.publicKey.jwk(keyID: nil).x == RFCVectors.edX)

        let compact = try CompactJWS.sign(header: JOSEHeader(alg: "EdDSA"), payload: Array(RFCVectors.edPayload.utf8), key: privateKey)
        #expect(compact == RFCVectors.edCompact)
    }

    @Test func rfc8037A5PublishedSignatureVerifies() throws {
        let key = try RFCVectors.edPublicJWK.publicKey()
        let (input, signature) = RFCVectors.split(RFCVectors.edCompact)
        #expect(key.verify(signature: signature, message: input, algorithm: .edDSA))
        var tampered = signature
        tampered[0] ^= 0x80
        #expect(!key.verify(signature: tampered, message: input, algorithm: .edDSA))
    }

    @Test func rfc8037A3ThumbprintMatches() throws {
        #expect(try RFCVectors.edPublicJWK.publicKey().thumbprint() == RFCVectors.edThumbprint)
    }
}

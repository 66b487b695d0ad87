import Foundation
import Testing
@testable import JOSE

@Suite("AES-256-GCM and MasterKey")
struct EncryptionTests {
    let key = SecureRandom.bytes(count: 32)
    let plaintext = Array("a PKCS#8 signing key, say".utf8)
    let associatedData = Array("signing-key:realm-1:kid-1".utf8)

    @Test func sealMatchesGCMSpecTestCase16() throws {
        // McGrew & Viega, "The Galois/Counter Mode of Operation", test case 16 (AES-256, 96-bit IV, AAD).
        let sealed = try AESGCM.seal(
            key: Hex.decode("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")!,
            nonce: Hex.decode("cafebabefacedbaddecaf888")!,
            plaintext: Hex.decode("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39")!,
            associatedData: Hex.decode("feedfacedeadbeeffeedfacedeadbeefabaddad2")!)
        #expect(Hex.encode(sealed) == "cafebabefacedbaddecaf888"
            + "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
            + "76fc6ece0f4e1768cddf8853bb2d551b")
        let opened = try AESGCM.open(
            key: Hex.decode("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")!, sealed: sealed,
            associatedData: Hex.decode("feedfacedeadbeeffeedfacedeadbeefabaddad2")!)
        #expect(Hex.encode(opened).hasPrefix("d9313225f88406e5"))
    }

    @Test func roundTripsWithLayoutNonceCiphertextTag() throws {
        let sealed = try AESGCM.seal(key: key, plaintext: plaintext, associatedData: associatedData)
        #expect(sealed.count == 12 + plaintext.count + 16)
        #expect(try AESGCM.open(key: key, sealed: sealed, associatedData: associatedData) == plaintext)
    }

    @Test func roundTripsEmptyPlaintextAndEmptyAssociatedData() throws {
        let sealed = try AESGCM.seal(key: key, plaintext: [])
        #expect(sealed.count == 28)
        #expect(try AESGCM.open(key: key, sealed: sealed) == [])
    }

    @Test func everySealUsesAFreshNonce() throws {
        let first = try AESGCM.seal(key: key, plaintext: plaintext)
        let second = try AESGCM.seal(key: key, plaintext: plaintext)
        #expect(first.prefix(12) != second.prefix(12))
        #expect(first != second)
    }

    @Test(arguments: [0, 5, 12, 20, 12 + 25, 12 + 25 + 15])
    func flippingAnyByteFailsToOpen(position: Int) throws {
        // Positions cover the nonce, the ciphertext and the tag (plaintext is 25 bytes).
        var sealed = try AESGCM.seal(key: key, plaintext: plaintext, associatedData: associatedData)
        sealed[position] ^= 0x01
        let error = #expect(throws: JOSEError.self) { try AESGCM.open(key: key, sealed: sealed, associatedData: associatedData) }
        #expect(error?.code == .decryptionFailed)
    }

    @Test func changedAssociatedDataFailsToOpen() throws {
        let sealed = try AESGCM.seal(key: key, plaintext: plaintext, associatedData: associatedData)
        #expect(throws: JOSEError.self) { try AESGCM.open(key: key, sealed: sealed, associatedData: associatedData + [0]) }
        #expect(throws: JOSEError.self) { try AESGCM.open(key: key, sealed: sealed, associatedData: []) }
    }

    @Test func wrongKeyTruncationAndBadKeyLengthFail() throws {
        let sealed = try AESGCM.seal(key: key, plaintext: plaintext)
        #expect(throws: JOSEError.self) { try AESGCM.open(key: SecureRandom.bytes(count: 32), sealed: sealed) }
        #expect(throws: JOSEError.self) { try AESGCM.open(key: key, sealed: Array(sealed.dropLast())) }
        #expect(throws: JOSEError.self) { try AESGCM.open(key: key, sealed: Array(sealed.prefix(27))) }
        let error = #expect(throws: JOSEError.self) { try AESGCM.seal(key: Array(key.prefix(16)), plaintext: plaintext) }
        #expect(error?.code == .invalidKey)
    }

    @Test func masterKeyBindsCiphertextToContext() throws {
        let master = MasterKey.generate()
        let sealed = master.seal(plaintext, context: "signing-key:realm-1:kid-1")
        #expect(try master.open(sealed, context: "signing-key:realm-1:kid-1") == plaintext)
        let error = #expect(throws: JOSEError.self) { try master.open(sealed, context: "signing-key:realm-2:kid-1") }
        #expect(error?.code == .decryptionFailed)
        #expect(throws: JOSEError.self) { try MasterKey.generate().open(sealed, context: "signing-key:realm-1:kid-1") }
    }

    @Test func masterKeyAcceptsHexBase64AndBase64URLOfTheSameBytes() throws {
        let bytes = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 7 + 250) }
        let fromBytes = try MasterKey(bytes: bytes)
        let sealed = fromBytes.seal(plaintext, context: "c")
        let encodings = [
            Hex.encode(bytes), Hex.encode(bytes).uppercased(), Data(bytes).base64EncodedString(),
            Base64URL.encode(bytes), fromBytes.encoded + "\n",
        ]
        for text in encodings {
            #expect(try MasterKey(encoded: text).open(sealed, context: "c") == plaintext, "\(text.count)-character encoding")
        }
        #expect(fromBytes.encoded == Base64URL.encode(bytes))
    }

    @Test(arguments: ["", "abcd", String(repeating: "a", count: 63), String(repeating: "g", count: 64), Base64URL.encode([UInt8](repeating: 1, count: 31))])
    func masterKeyRejectsWrongLengthsAndEncodings(text: String) {
        let error = #expect(throws: JOSEError.self) { try MasterKey(encoded: text) }
        #expect(error?.code == .invalidKey)
    }

    @Test func masterKeyRejectsWrongByteCountAndRedactsItself() throws {
        #expect(throws: JOSEError.self) { try MasterKey(bytes: [UInt8](repeating: 0, count: 31)) }
        let master = try MasterKey(bytes: [UInt8](repeating: 0xAB, count: 32))
        #expect("\(master)" == "MasterKey(redacted)")
        #expect(!String(reflecting: master).contains("171"))
    }
}

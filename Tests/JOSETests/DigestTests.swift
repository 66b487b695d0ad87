import Testing
import JOSE

@Suite("SHA-256, HMAC, random, constant-time compare")
struct DigestTests {
    @Test func sha256MatchesFIPSVectors() {
        #expect(Hex.encode(SHA256.hash([UInt8]())) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Hex.encode(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(Array("abc".utf8)) == SHA256.hash("abc"))
        #expect(SHA256.hash(Array("abc".utf8)[...]) == SHA256.hash("abc"), "ArraySlice input")
        #expect(SHA256.hexDigest("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let longInput = String(repeating: "a", count: 1_000_000)
        #expect(Hex.encode(SHA256.hash(longInput)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func hmacSHA256MatchesRFC4231() {
        let case1 = HMACSHA256.authenticate(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8))
        #expect(Hex.encode(case1) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let case2 = HMACSHA256.authenticate(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(case2) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // RFC 4231 case 6: a key longer than the block size is hashed first.
        let case6 = HMACSHA256.authenticate(
            key: [UInt8](repeating: 0xAA, count: 131), message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(Hex.encode(case6) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func hmacAcceptsEmptyKeyAndMessage() {
        // Known value: HMAC-SHA256("", "").
        #expect(Hex.encode(HMACSHA256.authenticate(key: [], message: []))
            == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func constantTimeEqualsComparesContentAndLength() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(ConstantTime.equals([], []))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(!ConstantTime.equals([1, 2], [1, 2, 3]))
        #expect(!ConstantTime.equals([], [0]))
    }

    @Test func secureRandomReturnsRequestedCountsAndDistinctTokens() {
        #expect(SecureRandom.bytes(count: 0).isEmpty)
        #expect(SecureRandom.bytes(count: 1000).count == 1000)
        #expect(SecureRandom.bytes(count: 32) != SecureRandom.bytes(count: 32))
        let token = SecureRandom.token()
        #expect(token.utf8.count == 43)
        #expect(Base64URL.decode(token)?.count == 32)
        #expect(SecureRandom.token(byteCount: 16).utf8.count == 22)
        #expect(Set((0..<100).map { _ in SecureRandom.token() }).count == 100)
    }

    @Test func pooledRandomBytesAreNeverHandedOutTwiceAcrossBlocks() {
        // 33-byte draws straddle every 4 KiB block boundary; any byte handed out twice (or a
        // zeroed one) would show as a repeated 33-byte draw.
        let draws = (0..<1_000).map { _ in SecureRandom.bytes(count: 33) }
        #expect(Set(draws).count == draws.count)
        #expect(draws.allSatisfy { $0.count == 33 && $0 != [UInt8](repeating: 0, count: 33) })
        // At and just past the pooled limit (256 bytes).
        #expect(SecureRandom.bytes(count: 256).count == 256)
        #expect(SecureRandom.bytes(count: 257).count == 257)
    }

    @Test func hexRoundTripsAndRejectsOddOrNonHex() {
        #expect(Hex.encode([0x00, 0xAB, 0xFF]) == "00abff")
        #expect(Hex.decode("00abFF") == [0x00, 0xAB, 0xFF])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}

import Foundation
import Testing
import JOSE

@Suite("Base64URL")
struct Base64URLTests {
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func encodesAndDecodesRFC4648Vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func usesTheURLSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xFB, 0xFF, 0xBF])
    }

    @Test func roundTripsEveryLengthAndAgreesWithFoundation() {
        for length in 0...70 {
            let bytes = SecureRandom.bytes(count: length)
            let encoded = Base64URL.encode(bytes)
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(encoded == foundation)
            #expect(Base64URL.decode(encoded) == bytes)
            #expect(Base64URL.decode(encoded[...]) == bytes, "Substring input")
        }
    }

    @Test func encodesNonContiguousSequences() {
        #expect(Base64URL.encode((0..<3).lazy.map { UInt8($0 + 0x66) }) == Base64URL.encode([0x66, 0x67, 0x68]))
    }

    @Test(arguments: [
        "Zg==", "Zm8=", "Zm9v====",       // padding
        "Zm9v\n", " Zm9v", "Zm 9v", "Zm9v\r\nYg", "Zm9v\t", // whitespace
        "Zm+v", "Zm/v", "Zm9v!", "Zm9vé", "Zm9v.", // outside the alphabet
        "Z", "Zm9vY",                     // one dangling symbol
        "Zh", "Zm9", "Zm9vYh", "Zm9vYmF", // non-canonical: unused trailing bits set
    ])
    func rejectsNonStrictInput(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}

@testable import HeraldApple
import Testing

/// Apple's `Cache-Control` is outside input: no header shape may trap its reader (issue #19).
@Suite("Cache-Control max-age")
struct CacheControlMaxAgeTests {
    @Test func bareEqualsDirectivesAreSkippedNotATrap() {
        #expect(CacheControlMaxAge.seconds(from: "=") == nil)
        #expect(CacheControlMaxAge.seconds(from: "=, ,=60") == nil)
        #expect(CacheControlMaxAge.seconds(from: "=, max-age=60") == 60)
    }

    @Test func onlyASCIIDigitsAreAnAge() {
        #expect(CacheControlMaxAge.seconds(from: "max-age=6\u{0301}0") == nil)
        #expect(CacheControlMaxAge.seconds(from: "max-age=99999999999999999999999") == Int.max)  // saturates; the policy clamps
    }
}

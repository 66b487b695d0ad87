@testable import HeraldServer
import JOSE
import Testing

/// JSON numbers are outside input: an integer read is a checked conversion (issue #19).
@Suite("JSON integer reads")
struct JSONIntegerBoundsTests {
    /// `Double(Int.max)` rounds up to 2^63, so a range check in Double passes it and a plain
    /// `Int(_:)` traps; the checked read refuses it.
    @Test func numbersAtAndBeyondTheIntegerRangeAreRefusedNotATrap() {
        for hostile in [Double(Int.max), 9.3e18, 1e308, -1e308, -Double(Int.max) * 2, 1.5] {
            #expect(JSONRequestBody.integer(.number(hostile), in: 0...Int.max) == nil, "\(hostile)")
        }
        #expect(JSONRequestBody.integer(.number(42), in: 0...Int.max) == 42)
    }
}

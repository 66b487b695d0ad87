import Foundation
import Testing
@testable import HeraldApple

/// The hand-written UTC form of claim times matches Foundation's ISO 8601 style exactly.
@Suite("Claim time text")
struct LifetimeTextTests {
    @Test("utc(_:) writes what Date.formatted(.iso8601) writes, across leap years, the Julian switch and the year range")
    func matchesFoundation() {
        var times: [Double] = [0, -1, 86_399, 86_400, 951_782_400, 951_868_799, 1_798_761_600.75, -62_167_219_200, -12_219_292_800, -12_219_292_801,
                               253_402_300_799, -2_208_988_800, 4_107_542_400, 1_709_164_800]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 { times.append(Double(Int64.random(in: -62_167_219_200..<253_402_300_800, using: &generator))) }
        for time in times {
            #expect(LifetimeText.utc(time) == Date(timeIntervalSince1970: time.rounded(.down)).formatted(.iso8601), "\(time)")
        }
    }

    @Test("a quoted header value is the value in quotes; control characters and length are tamed")
    func quoted() {
        #expect(AlgorithmCheck.quoted("W6WcOKB") == "\"W6WcOKB\"")
        #expect(AlgorithmCheck.quoted("a\u{1}b") == "\"a?b\"")
        #expect(AlgorithmCheck.quoted(String(repeating: "k", count: 65)) == "\"" + String(repeating: "k", count: 64) + "…\"")
        #expect(AlgorithmCheck.quoted("é") == "\"é\"")
    }
}

import Foundation
import Testing
@testable import TokenIssuer

/// Session ids sort by creation time (issue #39: new sessions land at the right edge of the
/// indexes keyed by them) and stay unguessable.
@Suite("Session ids")
struct SessionIDTests {
    @Test("ids sort by their creation time and never repeat within one millisecond")
    func idsSortByTimeAndAreUnique() {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        // 10 ms apart (ids made within one millisecond are ordered among themselves by chance).
        let ids = (0..<1_000).map { SessionID.make(at: start.addingTimeInterval(Double($0) / 100)) }
        #expect(ids == ids.sorted(), "not in creation order")
        #expect(ids.allSatisfy { $0.count == 28 })
        let sameMillisecond = (0..<1_000).map { _ in SessionID.make(at: start) }
        #expect(Set(sameMillisecond).count == 1_000)
        #expect(sameMillisecond.allSatisfy { $0.hasPrefix("01a3185c5000") })  // 1,800,000,000,000 ms in 12 hex digits
    }
}

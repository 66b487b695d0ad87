import Foundation
@testable import HeraldServer
import Testing

/// A log line is one JSON object whatever its values hold: the fast path copies a value
/// unescaped only when it has nothing JSON must escape.
@Suite("Log line escaping")
struct LogLineEscapingTests {
    @Test func everyValueReadsBackAsWritten() throws {
        let capture = LogCapture()
        let logger = Logger(level: .info, now: { Date(timeIntervalSince1970: 0) }, sink: capture.sink)
        let values = ["plain", "a \"quoted\" word", "back\\slash", "two\nlines", "tab\there", "bell\u{7}",
                      String(repeating: "long ", count: 20) + "\"", "émoji 🙂"]
        for (index, value) in values.enumerated() {
            logger.info("escaping", ["index": .int(index), "value": .string(value)])
        }
        let lines = capture.captured
        #expect(lines.count == values.count)
        for (line, value) in zip(lines, values) {
            #expect(!line.contains("\n"))
            let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["value"] as? String == value)
        }
    }
}

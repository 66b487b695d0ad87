import Foundation
import JOSE
import Storage
import Synchronization

/// Severity of a log line; lines below the configured level are dropped.
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    case debug, info, warning, error

    private var rank: Int { LogLevel.allCases.firstIndex(of: self)! }
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }
}

/// A value in a structured log line. Deliberately no "any Encodable": callers must say what
/// they log, which keeps tokens, secrets and emails out by construction at each call site.
public enum LogValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    case string(String), int(Int), double(Double), bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
}

/// Writes JSON lines (one object per event) to a sink, stderr by default.
public struct Logger: Sendable {
    public typealias Sink = @Sendable (String) -> Void

    public let level: LogLevel
    private let sink: Sink
    private let now: @Sendable () -> Date

    public init(level: LogLevel, now: @escaping @Sendable () -> Date, sink: @escaping Sink = Logger.standardError) {
        self.level = level
        self.sink = sink
        self.now = now
    }

    /// Writes `event` with `fields` when `level` is enabled.
    public func log(_ level: LogLevel, _ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) {
        guard level >= self.level else { return }
        // Built as bytes and made a String once: appending to a String re-checks its storage,
        // capacity and flags for every piece, which was most of a login line's ~2 % of the
        // login's CPU (perf).
        var line: [UInt8] = []
        line.reserveCapacity(384)  // a login's line, without regrowing
        line.append(contentsOf: #"{"ts":""#.utf8)
        line.append(contentsOf: Logger.timestamp(now()).utf8)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: level.rawValue.utf8)
        line.append(contentsOf: #"","event":"#.utf8)
        JSONEscaping.appendQuoted(event, to: &line)
        for (key, value) in fields {
            line.append(UInt8(ascii: ","))
            JSONEscaping.appendQuoted(key, to: &line)
            line.append(UInt8(ascii: ":"))
            switch value {
            case .string(let text): JSONEscaping.appendQuoted(text, to: &line)
            case .int(let number): line.append(contentsOf: String(number).utf8)
            case .double(let number): line.append(contentsOf: (number.isFinite ? String(number) : "null").utf8)
            case .bool(let flag): line.append(contentsOf: (flag ? "true" : "false").utf8)
            }
        }
        line.append(UInt8(ascii: "}"))
        sink(String(decoding: line, as: UTF8.self))
    }

    public func debug(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.debug, event, fields) }
    public func info(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.info, event, fields) }
    public func warning(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.warning, event, fields) }
    public func error(_ event: String, _ fields: KeyValuePairs<String, LogValue> = [:]) { log(.error, event, fields) }

    /// The default sink: stderr through a batching background writer (whole lines only, so
    /// concurrent lines never interleave).
    public static let standardError: Sink = { line in BufferedLogWriter.standardError.append(line) }

    /// RFC 3339 UTC with milliseconds, formatted by hand: `String(format:)` costs more than
    /// the rest of a log line.
    static func timestamp(_ date: Date) -> String {
        // Clamped like stored times (years 1-9999): `Int64(_:)` of a NaN or far-off clock
        // reading traps, and a log line must never be what brings the server down.
        let range = Date.unixSecondsRange
        let seconds = date.timeIntervalSince1970.isNaN ? 0
            : min(max(date.timeIntervalSince1970, Double(range.lowerBound)), Double(range.upperBound))
        let millis = Int64((seconds * 1000).rounded(.down))
        // Floored, so a time before 1970 has its milliseconds in 0..<1000 like any other.
        var (wholeSeconds, milliseconds) = millis.quotientAndRemainder(dividingBy: 1000)
        if milliseconds < 0 { wholeSeconds -= 1; milliseconds += 1000 }
        var time = time_t(wholeSeconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        // Digits written into the string's own storage: appending `String(value)` per field
        // was a quarter of an access-log line.
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var index = 0
            func put(_ value: Int32, digits: Int) {
                var rest = value
                for offset in (0..<digits).reversed() {
                    buffer[index + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                index += digits
            }
            func put(_ separator: Unicode.Scalar) {
                buffer[index] = UInt8(ascii: separator)
                index += 1
            }
            put(parts.tm_year + 1900, digits: 4); put("-")
            put(parts.tm_mon + 1, digits: 2); put("-")
            put(parts.tm_mday, digits: 2); put("T")
            put(parts.tm_hour, digits: 2); put(":")
            put(parts.tm_min, digits: 2); put(":")
            put(parts.tm_sec, digits: 2); put(".")
            put(Int32(milliseconds), digits: 3); put("Z")
            return index
        }
    }
}

/// Collects log lines in memory; tests use it to assert log hygiene.
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var sink: Logger.Sink { { [self] line in self.lines.withLock { $0.append(line) } } }
    public var captured: [String] { lines.withLock { $0 } }
}

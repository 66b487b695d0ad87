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
        var line = ""
        line.reserveCapacity(256)  // an access-log line, without regrowing
        line += "{\"ts\":\"\(Logger.timestamp(now()))\",\"level\":\"\(level.rawValue)\",\"event\":"
        Logger.appendJSONString(event, to: &line)
        for (key, value) in fields {
            line.append(",")
            Logger.appendJSONString(key, to: &line)
            line.append(":")
            switch value {
            case .string(let text): Logger.appendJSONString(text, to: &line)
            case .int(let number): line.append(String(number))
            case .double(let number): line.append(number.isFinite ? String(number) : "null")
            case .bool(let flag): line.append(flag ? "true" : "false")
            }
        }
        line.append("}")
        sink(line)
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

    static func appendJSONString(_ text: String, to line: inout String) {
        line.append("\"")
        // Nearly every value needs no escape: one byte scan, then a bulk append, instead of a
        // scalar-by-scalar copy (which was most of a log line's cost).
        guard !JSONEscaping.isPlain(text) else {
            line.append(text)
            line.append("\"")
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line.append("\\\"")
            case "\\": line.append("\\\\")
            case "\n": line.append("\\n")
            case "\r": line.append("\\r")
            case "\t": line.append("\\t")
            case _ where scalar.value < 0x20:
                line.append(String(format: "\\u%04x", scalar.value))
            default: line.unicodeScalars.append(scalar)
            }
        }
        line.append("\"")
    }
}

/// Collects log lines in memory; tests use it to assert log hygiene.
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var sink: Logger.Sink { { [self] line in self.lines.withLock { $0.append(line) } } }
    public var captured: [String] { lines.withLock { $0 } }
}

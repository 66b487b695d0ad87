import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Batches log lines and writes them to a file descriptor from one background queue, so
/// request threads never wait on write(2). The first line into an empty buffer schedules a
/// write `flushDelay` later (or at once past `flushThreshold` bytes): under load the lines of
/// hundreds of requests leave in one system call and one wake-up, instead of one each. A
/// line is out within that delay; a SIGKILL can lose at most that much. The buffer is
/// bounded; lines beyond it are counted and reported.
public final class BufferedLogWriter: Sendable {
    /// The writer behind `Logger.standardError`.
    public static let standardError = BufferedLogWriter(fileDescriptor: 2)

    private struct Pending {
        var bytes: [UInt8] = []
        var flushScheduled = false
        var dropped = 0
    }

    private static let capacity = 8 << 20
    private static let flushThreshold = 64 << 10
    private static let flushDelay = DispatchTimeInterval.milliseconds(20)
    private let fileDescriptor: Int32
    private let pending = Mutex(Pending())
    private let queue = DispatchQueue(label: "herald.log-writer")

    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Queues one line (a newline is added) for the background writer.
    public func append(_ line: String) {
        enum Flush { case none, later, now }
        let flush = pending.withLock { pending -> Flush in
            guard pending.bytes.count + line.utf8.count < BufferedLogWriter.capacity else {
                pending.dropped += 1
                return .none
            }
            pending.bytes.append(contentsOf: line.utf8)
            pending.bytes.append(0x0A)
            if pending.bytes.count >= BufferedLogWriter.flushThreshold { return .now }
            if pending.flushScheduled { return .none }
            pending.flushScheduled = true
            return .later
        }
        switch flush {
        case .none: break
        case .later: queue.asyncAfter(deadline: .now() + BufferedLogWriter.flushDelay) { self.writePending() }
        case .now: queue.async { self.writePending() }
        }
    }

    /// Writes everything queued so far before returning (used at shutdown).
    public func flush() {
        queue.sync { writePending() }
    }

    private func writePending() {
        var (bytes, dropped) = pending.withLock { pending in
            defer { pending = Pending() }
            return (pending.bytes, pending.dropped)
        }
        if dropped > 0 {
            bytes.append(contentsOf: "{\"level\":\"warning\",\"event\":\"log_lines_dropped\",\"count\":\(dropped)}\n".utf8)
        }
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // stderr is gone: nothing sensible left to do with log lines
                }
                offset += written
            }
        }
    }
}

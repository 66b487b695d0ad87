import Dispatch
import Foundation
import HeraldServer
import Synchronization

/// `herald serve`: runs until SIGINT or SIGTERM, then shuts down gracefully.
enum ServeCommand {
    static func run(arguments: [String]) async -> Int32 {
        let configuration: HeraldConfiguration
        do {
            configuration = try HeraldConfiguration.load(arguments: arguments, environment: ProcessInfo.processInfo.environment)
        } catch {
            printError("herald: \(error.message)")
            return 2
        }
        // The one clock of the process: every component reads time through it.
        let now: @Sendable () -> Date = { Date() }
        let logger = Logger(level: configuration.logLevel, now: now)
        let application: HeraldApplication
        do {
            application = try await HeraldApplication.open(configuration: configuration, logger: logger, now: now)
            try application.start()
        } catch let error as ConfigurationError {
            printError("herald: \(error.message)")
            return 1
        } catch {
            printError("herald: cannot start: \(error)")
            return 1
        }
        let signal = await waitForTerminationSignal()
        logger.info("shutting_down", ["signal": .string(signal)])
        await application.shutdown()
        BufferedLogWriter.standardError.flush()
        return 0
    }

    /// Suspends until SIGINT or SIGTERM arrives; returns its name.
    private static func waitForTerminationSignal() async -> String {
        let queue = DispatchQueue(label: "herald.signals")
        let waiter = SignalWaiter()
        let sources = [(SIGINT, "SIGINT"), (SIGTERM, "SIGTERM")].map { number, name in
            Foundation.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { waiter.deliver(name) }
            source.resume()
            return source
        }
        let name = await waiter.wait()
        sources.forEach { $0.cancel() }
        return name
    }
}

/// Hands the first signal to whoever waits, whether the signal or the wait comes first.
private final class SignalWaiter: Sendable {
    private enum State {
        case idle, waiting(CheckedContinuation<String, Never>), delivered(String)
    }
    private let state = Mutex(State.idle)

    func deliver(_ name: String) {
        state.withLock { state in
            switch state {
            case .idle: state = .delivered(name)
            case .waiting(let continuation):
                continuation.resume(returning: name)
                state = .delivered(name)
            case .delivered: break
            }
        }
    }

    func wait() async -> String {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if case .delivered(let name) = state {
                    continuation.resume(returning: name)
                } else {
                    state = .waiting(continuation)
                }
            }
        }
    }
}

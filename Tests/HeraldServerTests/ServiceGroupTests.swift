import Foundation
import Synchronization
import Testing
@testable import HeraldServer

/// The background services' owner and the signal that wakes them, in-process.
@Suite("Service group and wake signal")
struct ServiceGroupTests {
    /// Works until cancelled, then takes another 200 ms to finish (a wait cancellation cannot cut short).
    struct SlowStopper: Service {
        let flags: Flags

        func run() async throws {
            flags.started.store(true, ordering: .sequentiallyConsistent)
            while (try? await Task.sleep(for: .seconds(3_600))) != nil {}
            // Still running after cancellation: shutdown must wait for this.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { continuation.resume() }
            }
            flags.finished.store(true, ordering: .sequentiallyConsistent)
        }
    }

    /// What a `SlowStopper` reached.
    final class Flags: Sendable {
        let started = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)
        var didStart: Bool { started.load(ordering: .sequentiallyConsistent) }
        var didFinish: Bool { finished.load(ordering: .sequentiallyConsistent) }
    }

    @Test("shutdown cancels every service and returns only once each has returned")
    func shutdownAwaitsServices() async throws {
        let first = Flags(), second = Flags()
        let logger = Logger(level: .error, now: { Date() }, sink: { _ in })
        let group = ServiceGroup(services: [SlowStopper(flags: first), SlowStopper(flags: second)], logger: logger)
        group.start()
        try await waitUntil("both services run") {
            first.didStart && second.didStart
        }
        await group.shutdown()
        #expect(first.didFinish)
        #expect(second.didFinish)
        await group.shutdown()
    }

    // No wall-clock bound on the kept wake (a loaded machine can delay any task by seconds):
    // were the wake lost, the hour-long wait would hit the suite's time limit instead.
    @Test("a wake that comes while nobody waits is kept for the next wait; without one, the wait times out",
          .timeLimit(.minutes(2)))
    func wakeIsKept() async throws {
        let signal = WakeSignal()
        signal.wake()
        await signal.wait(timeout: .seconds(3_600))
        let clock = ContinuousClock()
        let timedOut = await clock.measure { await signal.wait(timeout: .milliseconds(200)) }
        #expect(timedOut >= .milliseconds(200))
    }

    @Test("a wake ends a wait in progress, and cancellation ends one too")
    func wakeEndsWait() async throws {
        let signal = WakeSignal()
        let waiter = Task { await signal.wait(timeout: .seconds(3_600)) }
        try await Task.sleep(for: .milliseconds(100))
        signal.wake()
        await waiter.value
        let cancelled = Task { await signal.wait(timeout: .seconds(3_600)) }
        try await Task.sleep(for: .milliseconds(100))
        cancelled.cancel()
        await cancelled.value
    }
}

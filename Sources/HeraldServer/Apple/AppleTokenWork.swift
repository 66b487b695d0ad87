import Foundation
import HeraldApple
import Synchronization

/// Calls to Apple that a request queues but does not wait for, drained from `AppleTokenVault`'s
/// durable queues: exchanging native logins' authorization codes for refresh tokens, and
/// revoking deleted accounts' tokens. Neither decides an answer (a failed exchange does not fail
/// the login; a failed revocation does not undo the delete), so they run here, after the
/// response, and are counted and logged — without tokens or codes.
///
/// Woken at once when work is queued (`wake()`, which the vault calls), it otherwise waits until
/// the queues' next due time (at most `longestWait`, so work another node left behind is
/// picked up too). A start begins with a round, so whatever a stopped node left in the queues
/// resumes. Failures back off in the vault; cancellation (shutdown) stops between calls.
final class AppleTokenWork: Service {
    /// The longest wait between two rounds.
    static let longestWait: Duration = .seconds(600)
    /// The wait after a round that failed on the database.
    static let waitAfterFailure: Duration = .seconds(60)

    private let vault: AppleTokenVault
    private let signal: WakeSignal
    private let metrics: HeraldMetrics
    private let logger: Logger
    private let refusals: AppleExchangeRefusals
    private let now: @Sendable () -> Date
    private let roundsDone = Atomic<Int>(0)

    /// `signal` is the one the vault wakes (`AppleTokenVault(queueChanged:)`).
    init(vault: AppleTokenVault, signal: WakeSignal, metrics: HeraldMetrics, logger: Logger,
         refusals: AppleExchangeRefusals, now: @escaping @Sendable () -> Date) {
        self.vault = vault
        self.signal = signal
        self.metrics = metrics
        self.logger = logger
        self.refusals = refusals
        self.now = now
    }

    /// Rounds finished (tests wait on it).
    var rounds: Int { roundsDone.load(ordering: .sequentiallyConsistent) }

    /// Starts a round now (tests, after moving their clock).
    func wake() {
        signal.wake()
    }

    func run() async throws {
        while !Task.isCancelled {
            let wait = await round()
            roundsDone.add(1, ordering: .sequentiallyConsistent)
            if Task.isCancelled { break }
            await signal.wait(timeout: wait)
        }
    }

    /// Exchanges and revokes what is due; answers how long to wait for the next round.
    private func round() async -> Duration {
        do {
            for attempt in try await vault.exchangeDue() {
                await report(attempt)
            }
            if !Task.isCancelled {
                report(try await vault.revokeDue())
            }
            guard let due = try await vault.nextDue() else { return Self.longestWait }
            return min(.seconds(max(0, due - now().unixSeconds)), Self.longestWait)
        } catch {
            logger.warning("apple_token_work_failed", ["errorType": .string(String(describing: type(of: error)))])
            return Self.waitAfterFailure
        }
    }

    private func report(_ attempt: AppleTokenVault.ExchangeAttempt) async {
        let realm: LogValue = .string(attempt.realmID)
        switch attempt.outcome {
        case .kept:
            metrics.recordAppleCall(operation: "token_exchange", outcome: "success")
            refusals.recordSuccess(realmID: attempt.realmID)
        case .retrying(let failure):
            metrics.recordAppleCall(operation: "token_exchange", outcome: failure.rawValue)
            await refusals.record(failure, realmID: attempt.realmID, clientID: attempt.clientID)
            logger.warning("apple_token_exchange_failed", ["realm": realm, "reason": .string(failure.rawValue), "retry": .bool(true)])
        case .refused(let failure):
            metrics.recordAppleCall(operation: "token_exchange", outcome: failure.rawValue)
            logger.warning("apple_token_exchange_failed", ["realm": realm, "reason": .string(failure.rawValue)])
            await refusals.record(failure, realmID: attempt.realmID, clientID: attempt.clientID)
        case .abandoned(let failure):
            // The code expired before Apple could be reached: the account keeps the token it had, if any.
            metrics.recordAppleCall(operation: "token_exchange", outcome: "abandoned")
            logger.warning("apple_token_exchange_abandoned", ["realm": realm, "reason": .string(failure?.rawValue ?? "expired")])
        }
    }

    private func report(_ round: AppleTokenVault.RevocationRound) {
        for (outcome, count) in [("success", round.revoked), ("failure", round.failed - round.abandoned),
                                 ("abandoned", round.abandoned)] {
            for _ in 0..<count { metrics.recordAppleCall(operation: "revoke", outcome: outcome) }
        }
        if round.failed > 0 {
            logger.warning("apple_revocation_failed", ["count": .int(round.failed), "abandoned": .int(round.abandoned)])
        }
    }
}

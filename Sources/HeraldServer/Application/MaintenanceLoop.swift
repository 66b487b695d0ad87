import Realms
import Synchronization
import TokenIssuer

/// Housekeeping every node runs in the background: purges sessions that ended long ago
/// (`EndedSessionPurge`), security events past `HERALD_EVENT_RETENTION`, and retries due
/// revocations of Apple tokens (`AppleTokenVault`). Expired pending authorizations, codes,
/// Apple replay entries and login-failure windows are purged by their own modules as they write.
final class MaintenanceLoop: Sendable {
    /// Often enough that the tables stay small, rarely enough to cost nothing.
    static let interval: Duration = .seconds(600)

    /// Waits between two rounds; returns early when the loop is cancelled.
    private let pause: @Sendable () async -> Void
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// A loop that waits `interval` between rounds.
    convenience init() {
        self.init(pause: { try? await Task.sleep(for: MaintenanceLoop.interval) })
    }

    /// A loop that waits with `pause` between rounds: tests decide when the next round starts.
    init(pause: @escaping @Sendable () async -> Void) {
        self.pause = pause
    }

    /// Runs the housekeeping now and then after every pause until `stop()`.
    func start(context: HeraldContext) {
        let purge = EndedSessionPurge(database: context.database, now: context.now)
        let events = SecurityEventLog(database: context.database)
        let eventRetentionSeconds = Int64(context.configuration.eventRetentionDays) * 86_400
        let now = context.now
        let logger = context.logger
        let pause = pause
        let loop = Task {
            while !Task.isCancelled {
                do {
                    let purged = try await purge.run()
                    if purged > 0 { logger.info("sessions_purged", ["count": .int(purged)]) }
                    let expired = try await events.purge(before: now().unixSeconds - eventRetentionSeconds)
                    if expired > 0 { logger.info("security_events_purged", ["count": .int(expired)]) }
                } catch {
                    // Type only: a storage error's text may quote SQL. The next round retries.
                    logger.warning("maintenance_failed", ["errorType": .string(String(describing: type(of: error)))])
                }
                await AppleTokenTasks.revokeDue(context: context)
                await pause()
            }
        }
        task.withLock { $0 = loop }
    }

    /// Cancels the loop and waits for a round in progress to finish.
    func stop() async {
        guard let loop = task.withLock({ $0.take() }) else { return }
        loop.cancel()
        await loop.value
    }
}

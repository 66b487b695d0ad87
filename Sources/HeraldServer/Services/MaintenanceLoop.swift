import Foundation
import Realms
import Storage
import TokenIssuer

/// Housekeeping every node runs in the background: purges sessions that ended long ago
/// (`EndedSessionPurge`) and security events past `HERALD_EVENT_RETENTION`. Expired pending
/// authorizations, codes, Apple replay entries and login-failure windows are purged by their own
/// modules as they write; Apple's token queues are `AppleTokenWork`'s.
struct MaintenanceLoop: Service {
    /// Often enough that the tables stay small, rarely enough to cost nothing.
    static let interval: Duration = .seconds(600)

    private let purge: EndedSessionPurge
    private let events: SecurityEventLog
    private let eventRetentionSeconds: Int64
    private let logger: Logger
    private let now: @Sendable () -> Date
    /// Waits between two rounds; returns early when the loop is cancelled. Tests pass their own,
    /// to decide when the next round starts.
    private let pause: @Sendable () async -> Void

    init(database: any Database, eventRetentionDays: Int, logger: Logger, now: @escaping @Sendable () -> Date,
         pause: (@Sendable () async -> Void)? = nil) {
        purge = EndedSessionPurge(database: database, now: now)
        events = SecurityEventLog(database: database)
        eventRetentionSeconds = Int64(eventRetentionDays) * 86_400
        self.logger = logger
        self.now = now
        self.pause = pause ?? { try? await Task.sleep(for: MaintenanceLoop.interval) }
    }

    /// Runs the housekeeping now and then after every pause until cancelled; a round in progress
    /// finishes first.
    func run() async throws {
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
            await pause()
        }
    }
}

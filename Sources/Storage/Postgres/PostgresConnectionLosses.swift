import Synchronization

/// What lost connections did to the transactions of a `PostgresDatabase`, for `/metrics`: how
/// many were run again on a new connection (a switchover, a failover, a restart), and how many
/// lost their connection after their COMMIT was sent: resolved by reading whether they
/// committed, or left unknown.
public final class PostgresConnectionLosses: Sendable {
    private let reruns = Atomic<Int>(0)
    private let unknownOutcomes = Atomic<Int>(0)
    private let resolvedCommitted = Atomic<Int>(0)
    private let resolvedNotCommitted = Atomic<Int>(0)

    init() {}

    func countRerun() { reruns.wrappingAdd(1, ordering: .relaxed) }
    func countUnknownOutcome() { unknownOutcomes.wrappingAdd(1, ordering: .relaxed) }
    func countResolved(committed: Bool) {
        if committed {
            resolvedCommitted.wrappingAdd(1, ordering: .relaxed)
        } else {
            resolvedNotCommitted.wrappingAdd(1, ordering: .relaxed)
        }
    }

    /// Transactions run again after their connection was lost or refused before COMMIT.
    public var rerunTransactions: Int { reruns.load(ordering: .relaxed) }
    /// Transactions whose connection was lost after COMMIT was sent and whose outcome stayed
    /// unknown (no check, or none possible before the deadline): answered 503.
    public var unknownCommitOutcomes: Int { unknownOutcomes.load(ordering: .relaxed) }
    /// Lost COMMITs found committed after reconnecting (answered as if the COMMIT had been).
    public var lostCommitsFoundCommitted: Int { resolvedCommitted.load(ordering: .relaxed) }
    /// Lost COMMITs found not committed after reconnecting (the transaction then ran again).
    public var lostCommitsFoundNotCommitted: Int { resolvedNotCommitted.load(ordering: .relaxed) }
}

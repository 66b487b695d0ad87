import Synchronization

/// What lost connections did to the transactions of a `PostgresDatabase`, for `/metrics`: how
/// many were run again on a new connection (a switchover, a failover, a restart), and how many
/// lost their connection after their COMMIT was sent, so whether they committed is unknown.
public final class PostgresConnectionLosses: Sendable {
    private let reruns = Atomic<Int>(0)
    private let unknownOutcomes = Atomic<Int>(0)

    init() {}

    func countRerun() { reruns.wrappingAdd(1, ordering: .relaxed) }
    func countUnknownOutcome() { unknownOutcomes.wrappingAdd(1, ordering: .relaxed) }

    /// Transactions run again after their connection was lost or refused before COMMIT.
    public var rerunTransactions: Int { reruns.load(ordering: .relaxed) }
    /// Transactions whose connection was lost after COMMIT was sent (answered 503).
    public var unknownCommitOutcomes: Int { unknownOutcomes.load(ordering: .relaxed) }
}

import Synchronization

/// The round trips to PostgreSQL of every connection of a `PostgresDatabase` (a pipeline
/// counts once), for `/metrics`: what a request costs the database in waits, which the
/// statement count no longer tells once statements travel together.
public final class PostgresRoundTrips: Sendable {
    private let count = Atomic<Int>(0)

    init() {}

    func add(_ amount: Int) {
        count.wrappingAdd(amount, ordering: .relaxed)
    }

    /// Round trips so far.
    public var total: Int { count.load(ordering: .relaxed) }
}

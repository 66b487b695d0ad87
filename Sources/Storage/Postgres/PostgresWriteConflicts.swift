import Synchronization

/// Write transactions of a `PostgresDatabase` that failed with a serialization failure or a
/// deadlock (SQLSTATE 40001, 40P01), for `/metrics`: each one ran again, or, on its last
/// attempt, failed the request with a 503. Writes that conflict by design (two logins of one
/// account) show here as a trickle; a steady rate means writes that should not conflict do.
public final class PostgresWriteConflicts: Sendable {
    private let count = Atomic<Int>(0)

    init() {}

    func countConflict() {
        count.wrappingAdd(1, ordering: .relaxed)
    }

    /// Conflicted attempts so far.
    public var total: Int { count.load(ordering: .relaxed) }
}

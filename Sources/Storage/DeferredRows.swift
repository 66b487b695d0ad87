import Synchronization

/// The rows of a read sent with a write transaction's COMMIT (`SQLExecutor.queryDeferred`):
/// filled before the write returns, read after it.
public final class DeferredRows: Sendable {
    private let filled = Mutex<[Row]?>(nil)

    init() {}

    /// Rows known at once (a store that runs the read immediately).
    init(_ rows: [Row]) {
        filled.withLock { $0 = rows }
    }

    func fill(_ rows: [Row]) {
        filled.withLock { $0 = rows }
    }

    var isFilled: Bool { filled.withLock { $0 != nil } }

    /// The rows; fails when the read never ran (the transaction failed before it, or `rows`
    /// was asked for inside the body that queued it).
    public func rows() throws(StorageError) -> [Row] {
        guard let rows = filled.withLock({ $0 }) else {
            throw StorageError(code: .other, message: "a deferred read's rows were asked for before its transaction ran it")
        }
        return rows
    }
}

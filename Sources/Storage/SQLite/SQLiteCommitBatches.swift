import Synchronization

/// How many writes each SQLite commit carried (group commit, `SQLiteWriter`), for `/metrics`:
/// the pages a commit dirties at the right edge of its tables' indexes are written to the WAL
/// once per commit, so writes per commit is what decides the bytes each write costs. A
/// histogram over powers of two up to `SQLiteWriter.maximumBatch`.
public final class SQLiteCommitBatches: Sendable {
    /// Upper bounds of the buckets (writes per commit), in order.
    public static let bounds = [1, 2, 4, 8, 16, 32, 64]

    /// Commits per bucket (not cumulative) and the writes they carried. One uncontended lock per
    /// commit, taken by the single writer (and by `/metrics` reading a snapshot).
    public struct Snapshot: Sendable {
        public var bucketCounts = [Int](repeating: 0, count: SQLiteCommitBatches.bounds.count)
        public var writes = 0

        /// Commits counted.
        public var commits: Int { bucketCounts.reduce(0, +) }
    }

    private let counts = Mutex(Snapshot())

    init() {}

    /// Counts one commit that carried `size` writes.
    func record(_ size: Int) {
        let index = Self.bounds.firstIndex { size <= $0 } ?? Self.bounds.count - 1
        counts.withLock { counts in
            counts.bucketCounts[index] += 1
            counts.writes += size
        }
    }

    /// The counts so far.
    public var snapshot: Snapshot { counts.withLock { $0 } }
}

import Synchronization

/// Copies the WAL back into the database file on a connection and thread of its own, so the
/// single writer keeps committing meanwhile.
///
/// SQLite's automatic checkpoint ran on the writer after the commit that took the WAL past
/// 1,000 frames (its default): it copied them and synced the database file — about 8 ms on
/// this kind of disk, several times a second under load — while every queued write waited. Now that
/// commit hands the copy to this checkpointer (a PASSIVE checkpoint, which takes no lock a
/// writer needs). What the writer commits during the pass is left over, so the writer's next
/// commit after the pass copies that rest itself (`afterCommit`): a few frames, and it is what
/// lets SQLite start the WAL over from the beginning at the next write. A pass running
/// alongside a busy writer never sees the WAL's end, so without that step the file would
/// only grow.
///
/// Durability is SQLite's own: checkpoints only copy committed transactions, and a crash
/// during one leaves the WAL to be replayed at the next open.
final class SQLiteCheckpointer: Sendable {
    /// WAL length in frames at which a commit starts a pass.
    private let threshold: Int
    private let connection: ConfinedConnection
    private let isRunning = Atomic<Bool>(false)
    /// Set when a pass ends; the writer's next commit then copies what the pass left over.
    private let catchUpDue = Atomic<Bool>(false)
    private let passes = Atomic<Int>(0)

    init(_ connection: ConfinedConnection, threshold: Int) {
        self.connection = connection
        self.threshold = threshold
    }

    /// Passes finished so far (for tests).
    var passCount: Int { passes.load(ordering: .acquiring) }

    /// On the writer's queue, after each commit: finishes the previous pass's work, or starts a
    /// pass when the WAL reached the threshold and none is running.
    func afterCommit(_ writer: SQLiteConnection) {
        if catchUpDue.exchange(false, ordering: .acquiringAndReleasing) {
            writer.checkpoint()
            return
        }
        guard writer.walFrameCount >= threshold,
              isRunning.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        connection.submit { [self] connection in
            connection?.checkpoint()
            catchUpDue.store(true, ordering: .releasing)
            isRunning.store(false, ordering: .releasing)
            passes.add(1, ordering: .releasing)  // Last: a test that sees the count sees the flags.
        }
    }

    /// Closes the connection after a running pass has finished.
    func close() async {
        await connection.close()
    }
}

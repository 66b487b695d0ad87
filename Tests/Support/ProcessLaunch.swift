import Foundation
import Synchronization

/// Starts child processes one at a time. Foundation's `Process.run()` on Linux crashed in a
/// memcpy inside `run()` when parallel tests launched processes at the same moment (seen once
/// in a full `make test`); every test that starts a process goes through this lock.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    /// Runs `process.run()` while no other test is launching one.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}

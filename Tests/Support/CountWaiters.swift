/// Tasks waiting for a count (requests served, connections accepted) to reach their target:
/// the part of a fake server's locked state that its `waitFor…(_:)` suspends on. The count
/// itself stays the server's.
struct CountWaiters {
    private var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Keeps `continuation` until the count reaches `target`; false when `count` already has,
    /// and the caller resumes it (outside the lock).
    mutating func wait(until target: Int, count: Int, _ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard count < target else { return false }
        waiters.append((target, continuation))
        return true
    }

    /// The waiters the count has now reached, removed; the caller resumes them outside the lock.
    mutating func reached(_ count: Int) -> [CheckedContinuation<Void, Never>] {
        let ready = waiters.filter { $0.target <= count }.map(\.continuation)
        waiters.removeAll { $0.target <= count }
        return ready
    }
}

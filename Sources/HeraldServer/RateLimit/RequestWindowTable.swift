/// One node's request counts per fixed window, and what it last learned of the other nodes'.
///
/// A request is checked and counted here, in memory, in one step under the limiter's lock, so
/// one node admits a concurrent burst exactly up to the limit. The node adds what it admitted
/// to the shared row in `request_windows` about once a second and reads back the total; the
/// other nodes' share of that total is what this node counts as `others` from then on. A node
/// learns the others' hits only when it shares hits of its own, so across nodes a window can
/// admit more than its limit by what each node admits before its next exchange (about one
/// second of its own traffic); on one node it is exact.
struct RequestWindowTable {
    /// One subject's window: realm, endpoint, subject (`ip:…` or `client:…`) and window start.
    struct Key: Hashable, Sendable {
        let realmID: String
        let endpoint: String
        let subject: String
        let windowStart: Int64
    }

    /// What this node knows of one window.
    struct Count {
        let limit: Int64
        let window: RequestWindow
        /// Admitted by this node.
        var admitted: Int64 = 0
        /// Of those, already added to the shared row.
        var shared: Int64 = 0
        /// Admitted by the other nodes, as of the last exchange with the shared row.
        var others: Int64 = 0

        var isFull: Bool { admitted + others >= limit }
    }

    /// A subject to check and count: its window and that window's limit.
    struct Subject {
        let key: Key
        let limit: Int64
        let window: RequestWindow
    }

    enum Admission: Equatable {
        case admitted
        /// Refused by a full window; the seconds until it ends.
        case refused(retryAfter: Int)
        /// The table is full of live windows and this request needs a new one: the caller
        /// counts it in the shared row directly instead.
        case overCapacity
    }

    /// What one exchange adds to the shared rows.
    struct Delta: Sendable {
        let key: Key
        let hits: Int64
    }

    /// The most windows held at once. Each live subject (client address or client id) of a
    /// window is one entry, so a flood from many addresses is what fills it; beyond it, new
    /// subjects are counted in the database one request at a time, as before this table.
    let capacity: Int
    private(set) var counts: [Key: Count] = [:]

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Counts one request in every subject's window, or in none when one of them is full.
    mutating func admit(_ subjects: [Subject], at now: Int64) -> Admission {
        let newWindows = subjects.filter { counts[$0.key] == nil }.count
        if newWindows > 0, counts.count + newWindows > capacity { return .overCapacity }
        for subject in subjects where counts[subject.key]?.isFull == true {
            return .refused(retryAfter: subject.window.retryAfter(at: now))
        }
        for subject in subjects {
            counts[subject.key, default: Count(limit: subject.limit, window: subject.window)].admitted += 1
        }
        return .admitted
    }

    /// Takes the hits not yet shared (marking them shared) and drops the windows that ended
    /// with nothing left to share.
    mutating func takeUnshared(at now: Int64) -> [Delta] {
        var deltas: [Delta] = []
        for (key, count) in counts {
            if count.admitted > count.shared {
                deltas.append(Delta(key: key, hits: count.admitted - count.shared))
                counts[key]?.shared = count.admitted
            } else if count.window.end <= now {
                counts[key] = nil
            }
        }
        return deltas
    }

    /// After an exchange: the shared row's total of `key`, of which this node's part is known.
    mutating func learn(_ key: Key, total: Int64) {
        guard var count = counts[key] else { return }
        count.others = max(0, total - count.shared)
        counts[key] = count
    }

    /// An exchange failed: its hits are unshared again, for the next one.
    mutating func restore(_ deltas: [Delta]) {
        for delta in deltas {
            counts[delta.key]?.shared -= delta.hits
        }
    }
}

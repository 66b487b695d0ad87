import Foundation
import Synchronization

/// One database on a test cluster, made for one test by `TestPostgres.createDatabase()`.
///
/// The test drops it when it is done with it: a full run creates some 180 databases of about
/// 7.5 MB each, which would otherwise stay on disk until the cluster is removed at exit.
/// Dropping is best effort: a failed drop is reported on stderr and never fails the test
/// (the database then goes with the cluster at exit).
public final class TestPostgresDatabase: Sendable {
    /// The database's name on the cluster.
    public let name: String
    /// A connection URL for it.
    public let url: String
    private let cluster: TestPostgres
    private let dropped = Atomic<Bool>(false)
    private let users = Mutex<[WeakReference]>([])

    init(name: String, url: String, cluster: TestPostgres) {
        self.name = name
        self.url = url
        self.cluster = cluster
    }

    /// Drops the database now, ending any session still connected to it (`WITH (FORCE)`): call
    /// it once the test has closed its connections, so only stragglers of a failed test are
    /// ended. Later calls do nothing.
    ///
    /// psql runs on a thread of its own, as blocking work must not hold a thread of the
    /// cooperative pool.
    public func drop() async {
        guard !dropped.exchange(true, ordering: .relaxed) else { return }
        let cluster = cluster
        let name = name
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread {
                Self.report(Result { () throws(TestPostgresError) in try cluster.dropDatabase(name) }, name: name)
                continuation.resume()
            }.start()
        }
    }

    /// Runs SQL through psql as the superuser, for what Herald's SQL dialect does not take
    /// (several statements, function bodies). On a thread of its own, like `drop()`.
    public func runSQL(_ sql: String) async throws {
        let cluster = cluster
        let name = name
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                continuation.resume(with: Result { () throws(TestPostgresError) in try cluster.runSQL(sql, database: name) })
            }.start()
        }
    }

    /// Counts `user` (a database object connected to this database) among the users that
    /// `dropWhenUsersAreGone()` waits for; only a weak reference is kept.
    public func track(_ user: any AnyObject & Sendable) {
        users.withLock { $0.append(WeakReference(user)) }
    }

    /// Drops the database once every tracked user is gone (their connections close when they
    /// go), for a fixture that is let go without closing its database: until then the database
    /// may still be in use, so it is never dropped early. If a user is still alive after
    /// `patience`, the database is left for the cluster's removal at exit. Returns at once; a
    /// thread of its own waits.
    public func dropWhenUsersAreGone(patience: TimeInterval = 300) {
        guard !dropped.exchange(true, ordering: .relaxed) else { return }
        let watched = users.withLock { $0 }
        let cluster = cluster
        let name = name
        Thread {
            let deadline = Date().addingTimeInterval(patience)
            while watched.contains(where: \.isAlive) {
                guard Date() < deadline else {
                    Self.report(.failure(TestPostgresError("still in use after \(Int(patience)) s")), name: name)
                    return
                }
                usleep(20_000)
            }
            Self.report(Result { () throws(TestPostgresError) in try cluster.dropDatabase(name) }, name: name)
        }.start()
    }

    /// A failed drop costs only disk space until exit and says nothing about the test, so it is
    /// reported rather than thrown; it is not hidden either, as it may point at a test that
    /// left connections behind or at a cluster in trouble.
    private static func report(_ result: Result<Void, TestPostgresError>, name: String) {
        if case .failure(let error) = result {
            FileHandle.standardError.write(Data("warning: test database \(name) not dropped: \(error)\n".utf8))
        }
    }
}

/// A weak reference that another thread may check: whether its object still exists.
private final class WeakReference: Sendable {
    weak let object: (any AnyObject & Sendable)?

    init(_ object: any AnyObject & Sendable) {
        self.object = object
    }

    var isAlive: Bool { object != nil }
}

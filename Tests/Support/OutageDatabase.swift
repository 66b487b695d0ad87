import Storage
import Synchronization

/// A database whose reads fail as an unreachable server's do (`StorageError.Code.unavailable`)
/// while `isDown` is set; writes and migrations always reach the wrapped database. Lets a test
/// show what a component answers when it cannot read, without stopping a server.
public final class OutageDatabase: Database {
    private let wrapped: any Database
    private let down = Atomic<Bool>(false)

    /// `wrapped`, reachable until `isDown` is set.
    public init(_ wrapped: any Database) {
        self.wrapped = wrapped
    }

    /// Whether reads fail now.
    public var isDown: Bool {
        get { down.load(ordering: .sequentiallyConsistent) }
        set { down.store(newValue, ordering: .sequentiallyConsistent) }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        if isDown { throw StorageError(code: .unavailable, message: "the test outage is on") }
        return try await wrapped.read(body)
    }

    @discardableResult
    public func write<T: Sendable>(isolation: WriteIsolation,
                                   _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await wrapped.write(isolation: isolation, body)
    }

    @discardableResult
    public func write<T: Sendable>(isolation: WriteIsolation, lostCommitCheck: @escaping LostCommitCheck<T>,
                                   _ body: @escaping @Sendable (any SQLExecutor) throws -> T) async throws -> T {
        try await wrapped.write(isolation: isolation, lostCommitCheck: lostCommitCheck, body)
    }

    public func migrate(_ migrations: [Migration]) async throws { try await wrapped.migrate(migrations) }

    public func close() async { await wrapped.close() }
}

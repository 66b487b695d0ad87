import Foundation
import HeraldTestSupport
import JOSE
@testable import HeraldServer

/// Two Herald nodes on one PostgreSQL database, as an operator runs them behind a load
/// balancer: same database URL, same master key, same admin token, one fake Apple. Both nodes
/// start at once on the fresh database, so their migrations and bootstrap race as they do when
/// a deployment comes up. Realm `acme` is provisioned through node A (`NativeLoginFixture`).
struct TwoNodeFixture {
    let a: NativeLoginFixture
    let b: NativeLoginFixture

    var nodes: [NativeLoginFixture] { [a, b] }

    /// Runs `body` with two fresh nodes on a fresh database of `postgres` (default: the shared
    /// test cluster), stops both afterwards and drops the database. `clock`, when given, is
    /// both nodes' clock.
    static func with<T>(postgres: TestPostgres? = nil, realmFields: [String: JSONValue] = [:], clock: TestClock? = nil,
                        _ body: (TwoNodeFixture) async throws -> T) async throws -> T {
        let masterKey = MasterKey.generate().encoded
        let apple = try FakeJWKSServer(document: fakeAppleKeys.document)
        defer { apple.stop() }
        let database = try (postgres ?? TestPostgres.shared()).createDatabase()
        let url = database.url
        let configure: @Sendable (inout HeraldConfiguration) -> Void = { configuration in
            configuration.database = .postgres(url: url)
            configuration.masterKey = masterKey
            configuration.appleJWKSURL = apple.url.absoluteString
        }
        let now: @Sendable () -> Date
        if let clock { now = clock.closure } else { now = { Date() } }
        async let first = start(configure, now: now)
        async let second = start(configure, now: now)
        let started = await [first, second]
        let nodes = started.compactMap { try? $0.get() }
        do {
            let fixture = TwoNodeFixture(a: NativeLoginFixture(herald: try started[0].get(), apple: apple, clock: clock),
                                         b: NativeLoginFixture(herald: try started[1].get(), apple: apple, clock: clock))
            try await fixture.a.provision(realmFields: realmFields)
            let result = try await body(fixture)
            for node in nodes { await node.stop() }
            await database.drop()
            return result
        } catch {
            for node in nodes { await node.stop() }
            await database.drop()
            throw error
        }
    }

    /// One node's start, as a value: when one of two fails, the other must still be stopped.
    private static func start(_ configure: @Sendable (inout HeraldConfiguration) -> Void,
                              now: @escaping @Sendable () -> Date) async -> Result<RunningHerald, any Error> {
        do { return .success(try await RunningHerald.start(configure: configure, now: now)) } catch { return .failure(error) }
    }
}

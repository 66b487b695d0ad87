import Foundation
import HeraldTestSupport
import JOSE
import Storage
import Synchronization
import Testing
@testable import Realms

/// A fresh, migrated database of one backend (HeraldTestSupport's `FreshDatabase`).
final class TestDatabase: Sendable {
    let fresh: FreshDatabase
    let clock = TestClock(Date(timeIntervalSince1970: 1_700_000_000))

    init(_ backend: Backend) async throws {
        fresh = try await FreshDatabase(backend, migrations: RealmsSchema.migrations)
    }

    var database: any Database { fresh.database }

    var realms: RealmStore { RealmStore(database: database, now: clock.closure) }
    var clients: ClientAppStore { ClientAppStore(database: database, sessionRevoker: NoSessions(), now: clock.closure) }
    var accounts: AccountStore { AccountStore(database: database, sessionRevoker: NoSessions(), deletionHook: nil, now: clock.closure) }
    var adminTokens: AdminTokenStore { AdminTokenStore(database: database, now: clock.closure) }
    var audit: AuditLog { AuditLog(database: database) }

    var googleProviders: GoogleProviderStore { GoogleProviderStore(database: database, now: clock.closure) }

    func appleProviders(masterKey: MasterKey) -> AppleProviderStore {
        AppleProviderStore(database: database, masterKey: masterKey, now: clock.closure)
    }

    /// Runs `body` with a fresh database of `backend`, then closes it.
    static func with(_ backend: Backend, _ body: (TestDatabase) async throws -> Void) async throws {
        let test = try await TestDatabase(backend)
        do {
            try await body(test)
        } catch {
            await test.fresh.close()
            throw error
        }
        await test.fresh.close()
    }

    /// The raw rows of a table, to check what is (and is not) stored.
    func rows(_ sql: String, _ parameters: SQLValue...) async throws -> [Row] {
        let parameters = parameters
        return try await database.read { db in try db.query(sql, parameters) }
    }
}

/// Realms' tests have no sessions to revoke (TokenIssuer, which owns them, is above Realms).
struct NoSessions: AccountSessionRevoker, ClientSessionRevoker {
    func revokeSessions(realmID: String, accountID: String, in executor: any SQLExecutor) throws {}
    func revokeSessions(realmID: String, clientID: String, in executor: any SQLExecutor) throws {}
}

/// The operator of most tests.
let admin = try! ChangeContext(actor: "ops", reason: "testing")

/// The `RealmsError` a call throws; records an issue when it throws nothing or something else.
func realmsError<R>(sourceLocation: SourceLocation = #_sourceLocation,
                    _ body: () async throws -> R) async -> RealmsError? {
    await #expect(throws: RealmsError.self, sourceLocation: sourceLocation) { _ = try await body() }
}

/// A PKCS#8 PEM for a private key, as Apple's .p8 files are.
func pem(of key: PrivateKey) throws -> String {
    let base64 = Data(try key.pkcs8DER()).base64EncodedString()
    var lines: [String] = []
    var rest = Substring(base64)
    while !rest.isEmpty {
        lines.append(String(rest.prefix(64)))
        rest = rest.dropFirst(64)
    }
    return "-----BEGIN PRIVATE KEY-----\n" + lines.joined(separator: "\n") + "\n-----END PRIVATE KEY-----\n"
}

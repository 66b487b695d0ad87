import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import Realms

/// Stored data Herald cannot read is an error someone sees, never a silent empty value
/// (issue #33): each test damages one row directly in the database, as a bad restore or a
/// hand edit would, and the read that meets it throws a storage error naming the column.
@Suite("Corrupt stored data")
struct CorruptStoredDataTests {
    /// The storage error `body` throws; records an issue when it throws nothing or something else.
    func storageError(sourceLocation: SourceLocation = #_sourceLocation,
                      _ body: () async throws -> Void) async -> StorageError? {
        await #expect(throws: StorageError.self, sourceLocation: sourceLocation) { try await body() }
    }

    @Test("a client's unreadable scopes or redirect URIs throw instead of reading as none", arguments: Backend.allCases)
    func clientJSONColumns(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            _ = try await test.clients.create(realmID: "acme", clientID: "ios", changes: ClientAppChanges(name: "iOS"),
                                              context: admin)
            #expect(try await test.clients.client(realmID: "acme", clientID: "ios")?.allowedScopes == ["openid", "profile", "email"])
            for (column, damaged) in [("allowed_scopes", "not json"), ("allowed_scopes", "{\"a\":1}"),
                                      ("allowed_scopes", "[\"openid\",7]"), ("redirect_uris", "[")] {
                try await test.database.write { db in
                    try db.execute("UPDATE client_apps SET allowed_scopes = '[]', redirect_uris = '[]'")
                    try db.execute("UPDATE client_apps SET \(column) = ?", .text(damaged))
                }
                let error = await storageError { _ = try await test.clients.client(realmID: "acme", clientID: "ios") }
                #expect(error?.code == .typeMismatch, "\(column) = \(damaged)")
                #expect(error?.message.contains(column) == true, "\(column) = \(damaged)")
                #expect(error?.message.contains(damaged) == false, "the value stays out of the error")
            }
        }
    }

    @Test("a provider's unreadable audiences throw instead of reading as none", arguments: Backend.allCases)
    func providerJSONColumns(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let store = test.appleProviders(masterKey: MasterKey.generate())
            _ = try await store.put(realmID: "acme", settings: AppleProviderSettings(clientId: "com.example.web"),
                                    context: admin)
            #expect(try await store.config(realmID: "acme") != nil)
            try await test.database.write { db in try db.execute("UPDATE apple_providers SET audiences = 'oops'") }
            let error = await storageError { _ = try await store.config(realmID: "acme") }
            #expect(error?.code == .typeMismatch)
            #expect(error?.message.contains("audiences") == true)
        }
    }

    @Test("an audit entry's unreadable changes throw instead of reading as no change", arguments: Backend.allCases)
    func auditChanges(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            #expect(try await !test.audit.list().items.isEmpty)
            try await test.database.write { db in try db.execute("UPDATE admin_audit SET changes = '{\"broken'") }
            let error = await storageError { _ = try await test.audit.list() }
            #expect(error?.code == .typeMismatch)
            #expect(error?.message.contains("changes") == true)
        }
    }
}

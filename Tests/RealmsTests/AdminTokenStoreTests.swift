import HeraldTestSupport
import JOSE
import Storage
import Testing
@testable import Realms

@Suite("Admin token store")
struct AdminTokenStoreTests {
    @Test("a created token authenticates as its name and is stored only as a hash", arguments: Backend.allCases)
    func createAndAuthenticate(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let token = try await test.adminTokens.create(name: "deploy-bot", context: ChangeContext(actor: "cli"))
            #expect(token.hasPrefix("hadm_") && token.count > 40)
            #expect(try await test.adminTokens.authenticate(token) == "deploy-bot")
            #expect(try await test.adminTokens.authenticate(token + "x") == nil)
            #expect(try await test.adminTokens.authenticate("") == nil)
            let rows = try await test.rows("SELECT * FROM admin_tokens")
            #expect(try rows.first?.bytes("token_hash") == SHA256.hash(token))
            #expect(!rows.contains { $0.values.contains(.text(token)) })
            #expect(try await test.adminTokens.list().map(\.name) == ["deploy-bot"])
        }
    }

    @Test("a token stored before roles and scopes existed is an admin of all realms after the migration", arguments: Backend.allCases)
    func migrationKeepsExistingTokensAllRealmsAdmins(backend: Backend) async throws {
        let fresh = try await FreshDatabase(backend, migrations: RealmsSchema.migrations.filter { $0.version < 6 })
        do {
            let token = "hadm_" + SecureRandom.token(byteCount: 32)
            _ = try await fresh.database.write { db in
                try db.execute("INSERT INTO admin_tokens (name, token_hash, created_at) VALUES ('old', ?, 1)",
                               .blob(SHA256.hash(token)))
            }
            try await fresh.database.migrate(RealmsSchema.migrations)
            let stored = try await AdminTokenStore(database: fresh.database, now: TestClock().closure).token(presented: token)
            #expect(stored == AdminToken(name: "old", createdAt: 1, role: .admin, scope: .allRealms))
        } catch {
            await fresh.close()
            throw error
        }
        await fresh.close()
    }

    @Test("role and scope are stored with the token; a scope names existing realms only", arguments: Backend.allCases)
    func roleAndScope(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let cli = try ChangeContext(actor: "cli")
            _ = try await test.realms.create(id: "acme", context: cli)
            let token = try await test.adminTokens.create(name: "support", role: .viewer, scope: .realms(["acme"]), context: cli)
            let stored = try await test.adminTokens.token(presented: token)
            #expect(stored?.role == .viewer && stored?.scope == .realms(["acme"]))
            #expect(try await test.adminTokens.list().map(\.scope) == [.realms(["acme"])])
            #expect(await realmsError {
                try await test.adminTokens.create(name: "x", scope: .realms(["nope"]), context: cli)
            }?.fieldIssues.first?.field == "realms")
            #expect(await realmsError { try await test.adminTokens.create(name: "x", scope: .realms([]), context: cli) }?.code == .invalidInput)
            #expect(try await test.adminTokens.list().map(\.name) == ["support"])
        }
    }

    @Test("deleting a realm takes it out of every scope, so a new realm of that id is not reached", arguments: Backend.allCases)
    func deletedRealmLeavesScopes(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let cli = try ChangeContext(actor: "cli")
            for id in ["acme", "globex"] { _ = try await test.realms.create(id: id, context: cli) }
            let both = try await test.adminTokens.create(name: "both", scope: .realms(["acme", "globex"]), context: cli)
            let only = try await test.adminTokens.create(name: "only", scope: .realms(["acme"]), context: cli)
            try await test.realms.delete("acme", context: cli)
            _ = try await test.realms.create(id: "acme", context: cli)
            #expect(try await test.adminTokens.token(presented: both)?.scope == .realms(["globex"]))
            #expect(try await test.adminTokens.token(presented: only)?.scope == .realms([]))
        }
    }

    @Test("names are unique, validated, and 'env' is reserved", arguments: Backend.allCases)
    func names(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let cli = try ChangeContext(actor: "cli")
            _ = try await test.adminTokens.create(name: "ops", context: cli)
            #expect(await realmsError { try await test.adminTokens.create(name: "ops", context: cli) }?.code == .conflict)
            #expect(await realmsError { try await test.adminTokens.create(name: "env", context: cli) }?.code == .invalidInput)
            #expect(await realmsError { try await test.adminTokens.create(name: "bad name", context: cli) }?.code == .invalidInput)
        }
    }

    @Test("a revoked token stops authenticating at once", arguments: Backend.allCases)
    func revoke(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let cli = try ChangeContext(actor: "cli")
            let token = try await test.adminTokens.create(name: "ops", context: cli)
            try await test.adminTokens.revoke(name: "ops", context: cli)
            #expect(try await test.adminTokens.authenticate(token) == nil)
            #expect(await realmsError { try await test.adminTokens.revoke(name: "ops", context: cli) }?.code == .notFound)
            let actions = try await test.audit.list().items.map(\.action)
            #expect(actions == ["admin-token.revoke", "admin-token.create"])
        }
    }

    @Test("the environment token follows HERALD_ADMIN_TOKEN: registered, replaced, removed", arguments: Backend.allCases)
    func environmentToken(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let first = String(repeating: "a", count: 32)
            let second = String(repeating: "b", count: 40)
            try await test.adminTokens.registerEnvironmentToken(first)
            #expect(try await test.adminTokens.authenticate(first) == "env")
            try await test.adminTokens.registerEnvironmentToken(second)
            #expect(try await test.adminTokens.authenticate(first) == nil)
            #expect(try await test.adminTokens.authenticate(second) == "env")
            try await test.adminTokens.registerEnvironmentToken(nil)
            #expect(try await test.adminTokens.authenticate(second) == nil)
            #expect(try await test.adminTokens.list().isEmpty)
        }
    }

    @Test("nodes starting together register the same environment token without a conflict", arguments: Backend.allCases)
    func concurrentEnvironmentToken(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let token = String(repeating: "n", count: 40)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 { group.addTask { try await test.adminTokens.registerEnvironmentToken(token) } }
                try await group.waitForAll()
            }
            #expect(try await test.adminTokens.authenticate(token) == "env")
            #expect(try await test.adminTokens.list().map(\.name) == ["env"])
        }
    }

    @Test("an environment token equal to a CLI-created token is a conflict", arguments: Backend.allCases)
    func environmentTokenEqualToCLIToken(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let token = try await test.adminTokens.create(name: "ops", context: ChangeContext(actor: "cli"))
            #expect(await realmsError { try await test.adminTokens.registerEnvironmentToken(token) }?.code == .conflict)
            #expect(try await test.adminTokens.authenticate(token) == "ops")
        }
    }

    @Test("an environment token shorter than 32 characters is refused", arguments: Backend.allCases)
    func shortEnvironmentToken(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            let error = await realmsError { try await test.adminTokens.registerEnvironmentToken(String(repeating: "a", count: 31)) }
            #expect(error?.fieldIssues.map(\.field) == ["HERALD_ADMIN_TOKEN"])
            #expect(try await test.adminTokens.list().isEmpty)
        }
    }
}

import HeraldTestSupport
import Storage
import Testing
@testable import Realms

@Suite("Account resolver")
struct AccountResolverTests {
    static func claims(email: String? = nil, name: PersonName = PersonName()) -> ProviderIdentityClaims {
        ProviderIdentityClaims(provider: "apple", subject: "001.returning", email: email, emailVerified: email != nil,
                               isPrivateEmail: false, name: name)
    }

    /// Resolves `claims` in a write transaction of its own, as the login does in its own, with
    /// the realm read as the login's pre-checks read it.
    static func resolve(_ test: TestDatabase, _ claims: ProviderIdentityClaims) async throws -> AccountResolution {
        let resolver = AccountResolver(now: test.clock.closure)
        let realm = try #require(try await test.database.read { db in try RealmStore.load(db, id: "acme") })
        return try await test.database.write { db in try resolver.resolve(db, realm: realm, claims: claims) }
    }

    @Test("a returning login that brings a missing name or a real email fills it", arguments: Backend.allCases)
    func returningLoginFillsMissingNameAndEmail(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let first = try await Self.resolve(test, Self.claims())
            #expect(AccountResolver.isPlaceholder(first.account.email))

            let withName = Self.claims(name: PersonName(givenName: "Jane"))
            #expect(try await Self.resolve(test, withName).account.name.givenName == "Jane")

            let withEmail = Self.claims(email: "jane@example.com")
            #expect(try await Self.resolve(test, withEmail).account.email == "jane@example.com")
        }
    }

    @Test("a disabled account is refused", arguments: Backend.allCases)
    func disabledAccountIsRefused(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let first = try await Self.resolve(test, Self.claims(email: "jane@example.com"))
            _ = try await test.accounts.update(realmID: "acme", id: first.account.id,
                                               changes: AccountChanges(status: .disabled), context: admin)
            await #expect(throws: AccountResolutionError.self) {
                try await Self.resolve(test, Self.claims(email: "jane@example.com"))
            }
        }
    }

    /// Issue #20: full Unicode lowercasing turned the Kelvin sign into "k", so a verified
    /// "\u{212A}ate@example.com" linked to kate@example.com's account. ASCII-only case folding
    /// keeps them apart, and a non-ASCII address never links.
    @Test("a Unicode look-alike of a verified email never links to its account", arguments: Backend.allCases)
    func lookAlikeEmailDoesNotLink(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let owner = try await Self.resolve(test, ProviderIdentityClaims(
                provider: "apple", subject: "001.owner", email: "kate@example.com", emailVerified: true,
                isPrivateEmail: false, name: PersonName()))
            let lookAlike = try await Self.resolve(test, ProviderIdentityClaims(
                provider: "apple", subject: "001.attacker", email: "\u{212A}ate@example.com", emailVerified: true,
                isPrivateEmail: false, name: PersonName()))
            #expect(!lookAlike.linkedByEmail)
            #expect(lookAlike.isNewUser)
            #expect(lookAlike.account.id != owner.account.id)
            // ASCII case still folds: the same address in capitals links.
            let capitals = try await Self.resolve(test, ProviderIdentityClaims(
                provider: "apple", subject: "001.capitals", email: "KATE@Example.com", emailVerified: true,
                isPrivateEmail: false, name: PersonName()))
            #expect(capitals.linkedByEmail)
            #expect(capitals.account.id == owner.account.id)
        }
    }
}

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

    @Test("a returning login that would change nothing is answered from a reader snapshot", arguments: Backend.allCases)
    func unchangedReturningLoginSkipsTheWriter(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let resolver = AccountResolver(database: test.database, now: test.clock.now)
            let full = PersonName(givenName: "Jane", familyName: "Doe", displayName: "Jane Doe")
            let first = try await resolver.resolve(realmID: "acme", claims: Self.claims(email: "jane@example.com", name: full))
            #expect(first.isNewUser)

            let snapshot = try await test.database.read { db in
                try AccountResolver.resolveUnchanged(db, realmID: "acme", claims: Self.claims(email: "jane@example.com"))
            }
            #expect(snapshot == AccountResolution(account: first.account, isNewUser: false, linkedByEmail: false))
            let again = try await resolver.resolve(realmID: "acme", claims: Self.claims(email: "jane@example.com"))
            #expect(again == snapshot)
        }
    }

    @Test("a returning login that brings a missing name or a real email goes to the write transaction and fills it", arguments: Backend.allCases)
    func returningLoginThatFillsSomethingStillWrites(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let resolver = AccountResolver(database: test.database, now: test.clock.now)
            let first = try await resolver.resolve(realmID: "acme", claims: Self.claims())
            #expect(AccountResolver.isPlaceholder(first.account.email))

            let withName = Self.claims(name: PersonName(givenName: "Jane"))
            let named = try await test.database.read { db in
                try AccountResolver.resolveUnchanged(db, realmID: "acme", claims: withName)
            }
            #expect(named == nil)
            #expect(try await resolver.resolve(realmID: "acme", claims: withName).account.name.givenName == "Jane")

            let withEmail = Self.claims(email: "jane@example.com")
            let emailed = try await test.database.read { db in
                try AccountResolver.resolveUnchanged(db, realmID: "acme", claims: withEmail)
            }
            #expect(emailed == nil)
            #expect(try await resolver.resolve(realmID: "acme", claims: withEmail).account.email == "jane@example.com")
        }
    }

    @Test("a disabled account is refused on the read path too", arguments: Backend.allCases)
    func disabledAccountIsRefused(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let resolver = AccountResolver(database: test.database, now: test.clock.now)
            let first = try await resolver.resolve(realmID: "acme", claims: Self.claims(email: "jane@example.com"))
            _ = try await test.accounts.update(realmID: "acme", id: first.account.id,
                                               changes: AccountChanges(status: .disabled), context: admin)
            await #expect(throws: AccountResolutionError.self) {
                try await resolver.resolve(realmID: "acme", claims: Self.claims(email: "jane@example.com"))
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
            let resolver = AccountResolver(database: test.database, now: test.clock.now)
            let owner = try await resolver.resolve(realmID: "acme", claims: ProviderIdentityClaims(
                provider: "apple", subject: "001.owner", email: "kate@example.com", emailVerified: true,
                isPrivateEmail: false, name: PersonName()))
            let lookAlike = try await resolver.resolve(realmID: "acme", claims: ProviderIdentityClaims(
                provider: "apple", subject: "001.attacker", email: "\u{212A}ate@example.com", emailVerified: true,
                isPrivateEmail: false, name: PersonName()))
            #expect(!lookAlike.linkedByEmail)
            #expect(lookAlike.isNewUser)
            #expect(lookAlike.account.id != owner.account.id)
            // ASCII case still folds: the same address in capitals links.
            let capitals = try await resolver.resolve(realmID: "acme", claims: ProviderIdentityClaims(
                provider: "apple", subject: "001.capitals", email: "KATE@Example.com", emailVerified: true,
                isPrivateEmail: false, name: PersonName()))
            #expect(capitals.linkedByEmail)
            #expect(capitals.account.id == owner.account.id)
        }
    }
}

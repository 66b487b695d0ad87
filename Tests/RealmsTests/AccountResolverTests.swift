import HeraldTestSupport
import Storage
import Testing
@testable import Realms

@Suite("Account resolver")
struct AccountResolverTests {
    static func claims(email: String? = nil, name: PersonName = PersonName(), picture: String? = nil)
        -> ProviderIdentityClaims {
        ProviderIdentityClaims(provider: "apple", subject: "001.returning", email: email, emailVerified: email != nil,
                               isPrivateEmail: false, name: name, picture: picture)
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

    @Test("the identity takes the provider's email once; later logins that bring it send no statement for it",
          arguments: Backend.allCases)
    func identityEmailIsWrittenOnce(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let resolver = AccountResolver(now: test.clock.closure)
            let realm = try #require(try await test.database.read { db in try RealmStore.load(db, id: "acme") })
            /// Resolves `claims`; returns the statements it wrote to `identities`.
            func identityWrites(_ claims: ProviderIdentityClaims) async throws -> [String] {
                try await test.database.write { db in
                    let recording = RecordingExecutor(db)
                    _ = try resolver.resolve(recording, realm: realm, claims: claims)
                    return recording.statements.filter { $0.contains("UPDATE identities") }
                }
            }
            let identityEmail = {
                try await test.rows("SELECT email FROM identities WHERE open_id = '001.returning'").first?
                    .optionalString("email")
            }
            #expect(try await identityWrites(Self.claims()).isEmpty)
            #expect(try await identityEmail() == nil)
            #expect(try await identityWrites(Self.claims(email: "jane@example.com")).count == 1)
            #expect(try await identityEmail() == "jane@example.com")
            #expect(try await identityWrites(Self.claims(email: "jane@example.com")).isEmpty)
            #expect(try await identityWrites(Self.claims(email: "other@example.com")).isEmpty)
            #expect(try await identityEmail() == "jane@example.com", "never overwritten")
        }
    }

    @Test("the first login's picture is stored; a later one fills it only while the account has none", arguments: Backend.allCases)
    func pictureIsKeptFromTheFirstLogin(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let first = try await Self.resolve(test, Self.claims(picture: "https://example.com/first.png"))
            #expect(first.account.pictureURL == "https://example.com/first.png")
            let later = try await Self.resolve(test, Self.claims(picture: "https://example.com/second.png"))
            #expect(later.account.pictureURL == "https://example.com/first.png")
            let stored = try await test.accounts.account(realmID: "acme", id: first.account.id)
            #expect(stored?.pictureURL == "https://example.com/first.png")

            let other = ProviderIdentityClaims(provider: "google", subject: "g-1", email: nil, emailVerified: false,
                                               isPrivateEmail: false)
            let bare = try await Self.resolve(test, other)
            #expect(bare.account.pictureURL == nil)
            var withPicture = other
            withPicture.picture = "https://example.com/later.png"
            #expect(try await Self.resolve(test, withPicture).account.pictureURL == "https://example.com/later.png")
            #expect(try await test.accounts.account(realmID: "acme", id: bare.account.id)?.pictureURL
                == "https://example.com/later.png")
        }
    }

    @Test("only an absolute https picture URL of at most 2,048 bytes without whitespace or control characters is kept")
    func pictureRule() {
        let prefix = "https://example.com/"
        let kept = ["https://lh3.googleusercontent.com/a/ACg8ocK=s96-c", "HTTPS://example.com/p.png",
                    prefix + String(repeating: "p", count: 2_048 - prefix.utf8.count)]
        for picture in kept {
            #expect(AccountResolver.sanitized(Self.claims(picture: picture)).picture == picture)
        }
        let dropped = ["http://example.com/p.png", "https:example.com/p.png", "https:///p.png", "/p.png", "p.png",
                       "javascript:alert(1)", "data:image/png;base64,AAAA", "ftp://example.com/p.png",
                       "https://example.com/a b.png", " https://example.com/p.png", "https://example.com/p.png\n",
                       "https://example.com/\u{0}p.png", "https://example.com/\u{85}p.png", "https://user:pw@example.com/p.png",
                       prefix + String(repeating: "p", count: 2_049 - prefix.utf8.count), ""]
        for picture in dropped {
            #expect(AccountResolver.sanitized(Self.claims(picture: picture)).picture == nil, "kept \(picture.debugDescription)")
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

    @Test("a returning login's resolution carries every identity of the account as the login leaves them; a new one none",
          arguments: Backend.allCases)
    func returningResolutionCarriesIdentities(backend: Backend) async throws {
        try await TestDatabase.with(backend) { test throws in
            _ = try await test.realms.create(id: "acme", context: admin)
            let created = try await Self.resolve(test, Self.claims())
            #expect(created.identities == nil)
            try await test.database.write { db in
                try AccountStore.link(db, Identity(realmId: "acme", provider: "google", openId: "g-1",
                                                   accountId: created.account.id, email: "g@example.com", linkedAt: 5))
            }
            // This login fills the Apple identity's missing email in its own transaction.
            let returning = try await Self.resolve(test, Self.claims(email: "jane@example.com"))
            let stored = try await test.database.read { db in
                try AccountStore.identities(db, realmID: "acme", accountID: created.account.id)
            }
            // Oldest link first: Google's (linked at 5) was stored after Apple's.
            #expect(stored.map(\.provider) == ["google", "apple"])
            #expect(stored.first { $0.provider == "apple" }?.email == "jane@example.com")
            #expect(returning.identities == stored)
        }
    }
}

/// Forwards to a transaction's executor and records every statement's SQL.
private final class RecordingExecutor: SQLExecutor {
    private let base: any SQLExecutor
    private(set) var statements: [String] = []

    init(_ base: any SQLExecutor) { self.base = base }

    func execute(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> Int {
        statements.append(sql)
        return try base.execute(sql, parameters)
    }

    func query(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) -> [Row] {
        statements.append(sql)
        return try base.query(sql, parameters)
    }

    func withSavepoint<T>(_ name: String, _ body: () throws -> T) throws -> T { try base.withSavepoint(name, body) }

    func executeDeferred(_ sql: String, _ parameters: [SQLValue]) throws(StorageError) {
        statements.append(sql)
        try base.executeDeferred(sql, parameters)
    }
}

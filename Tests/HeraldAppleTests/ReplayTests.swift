import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import Storage
import Testing

@Suite("Apple token replay protection")
struct ReplayTests {
    @Test(arguments: Backend.allCases) func secondUseOfATokenIsReplayed(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        let verifier = apple.verifier(replayStore: db.store)
        let token = apple.minter.token()
        #expect(try await db.verify(verifier, token: token, policy: defaultPolicy()).claims != nil)
        #expect(try await db.verify(verifier, token: token, policy: defaultPolicy()) == .rejected(.replayed))
    }

    @Test(arguments: Backend.allCases) func anotherTokenWithTheSameSubAndNonceIsReplayedUntilTheFirstExpires(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        let verifier = apple.verifier(replayStore: db.store)
        let now = apple.clock.now.timeIntervalSince1970.rounded(.down)
        let first = apple.minter.token { $0.claims["exp"] = .number(now + 100) }
        let second = apple.minter.token { $0.claims["exp"] = .number(now + 1000) }
        #expect(try await db.verify(verifier, token: first, policy: defaultPolicy()).claims != nil)
        #expect(try await db.verify(verifier, token: second, policy: defaultPolicy()) == .rejected(.replayed))
        // The first token is accepted until exp + 60 s leeway; its entry lives exactly as long.
        apple.clock.advance(by: 159)
        #expect(try await db.verify(verifier, token: second, policy: defaultPolicy()) == .rejected(.replayed))
        apple.clock.advance(by: 2)
        #expect(try await db.verify(verifier, token: second, policy: defaultPolicy()).claims != nil)
        #expect(try await db.verify(verifier, token: second, policy: defaultPolicy()) == .rejected(.replayed))
    }

    @Test(arguments: Backend.allCases) func replayIsScopedByRealm(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        let verifier = apple.verifier(replayStore: db.store)
        let token = apple.minter.token()
        #expect(try await db.verify(verifier, token: token, policy: defaultPolicy(realmID: "acme")).claims != nil)
        #expect(try await db.verify(verifier, token: token, policy: defaultPolicy(realmID: "globex")).claims != nil)
        #expect(try await db.verify(verifier, token: token, policy: defaultPolicy(realmID: "globex")) == .rejected(.replayed))
    }

    @Test(arguments: Backend.allCases) func tokensWithoutNonceAreNotTracked(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        let verifier = apple.verifier(replayStore: db.store)
        let token = apple.minter.token { $0.claims["nonce"] = nil }
        let policy = defaultPolicy(nonceRequired: false, rawNonce: nil)
        #expect(try await db.verify(verifier, token: token, policy: policy).claims != nil)
        #expect(try await db.verify(verifier, token: token, policy: policy).claims != nil)
        #expect(try await db.rowCount() == 0)
    }

    @Test(arguments: Backend.allCases) func rejectedTokensDoNotConsumeTheirNonce(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        let verifier = apple.verifier(replayStore: db.store)
        let token = apple.minter.token()
        #expect(try await db.verify(verifier, token: token, policy: defaultPolicy(audiences: ["com.other"])) == .rejected(.audience))
        #expect(try await db.verify(verifier, token: token, policy: defaultPolicy()).claims != nil)
    }

    @Test(arguments: Backend.allCases) func storesOnlyAHashOfSubAndNonce(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        #expect(try await db.verify(apple.verifier(replayStore: db.store), token: apple.minter.token(), policy: defaultPolicy()).claims != nil)
        let rows = try await db.database.read { db in try db.query("SELECT realm_id, key_hash, expires_at FROM apple_token_replays") }
        #expect(rows.count == 1)
        let stored = try rows[0].bytes("key_hash")
        #expect(stored.count == 32)
        let nonceClaim = AppleTokenMinter.nonceClaim(for: AppleTokenMinter.defaultRawNonce)
        #expect(stored == AppleReplayStore.keyHash(subject: AppleTokenMinter.defaultSubject, nonce: nonceClaim))
        for text in [AppleTokenMinter.defaultSubject, nonceClaim, AppleTokenMinter.defaultRawNonce] {
            #expect(!String(decoding: stored, as: UTF8.self).contains(text))
        }
    }

    @Test(arguments: Backend.allCases) func concurrentClaimsOfOnePairAcceptExactlyOne(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let store = db.store
        let database = db.database
        let accepted = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try await database.write { db in
                        try store.claim(db, realmID: "acme", subject: "s", nonce: "n", expiresAt: 2_000, now: 1_000,
                                        purgingUpTo: 0)
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == 1)
    }

    @Test(arguments: Backend.allCases) func purgeRemovesOnlyExpiredRowsAndIsBounded(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        for index in 0..<5 {
            #expect(try await db.claim(subject: "old-\(index)", expiresAt: 1_100, now: 1_000, purgingUpTo: 0))
        }
        #expect(try await db.claim(subject: "live", expiresAt: 5_000, now: 1_000, purgingUpTo: 0))
        // Each claim adds its own row, then deletes at most `purgingUpTo` expired ones.
        #expect(try await db.claim(subject: "new-1", expiresAt: 5_000, now: 2_000, purgingUpTo: 3))
        #expect(try await db.rowCount() == 4)
        #expect(try await db.claim(subject: "new-2", expiresAt: 5_000, now: 2_000, purgingUpTo: 10))
        #expect(try await db.rowCount() == 3)
    }

    @Test(arguments: Backend.allCases) func claimsPurgeExpiredRowsOpportunistically(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let store = AppleReplayStore(purgeIntervalSeconds: 60, purgeBatchSize: 100)
        // The first claim purges (nothing to purge yet) and arms the interval.
        #expect(try await db.claim(subject: "a", expiresAt: 1_010, now: 1_000, purgingUpTo: store.purgeBudget(now: 1_000), in: store))
        #expect(try await db.claim(subject: "b", expiresAt: 1_010, now: 1_001, purgingUpTo: store.purgeBudget(now: 1_001), in: store))
        #expect(try await db.rowCount() == 2)
        // Within the interval no purge runs.
        #expect(try await db.claim(subject: "c", expiresAt: 9_999, now: 1_020, purgingUpTo: store.purgeBudget(now: 1_020), in: store))
        #expect(try await db.rowCount() == 3)
        // After it, a claim removes the expired rows in the same transaction.
        #expect(try await db.claim(subject: "d", expiresAt: 9_999, now: 1_061, purgingUpTo: store.purgeBudget(now: 1_061), in: store))
        #expect(try await db.rowCount() == 2)
    }

    @Test(arguments: Backend.allCases) func migrationsBelongToTheAppleModuleAndAreIdempotent(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        try await db.database.migrate(AppleReplayStore.migrations)
        #expect(AppleReplayStore.migrations.allSatisfy { $0.module == "apple" })
    }
}

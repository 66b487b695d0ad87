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

    @Test(arguments: Backend.allCases) func aTokenIsKnownBySubNonceAndExpiry(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        let verifier = apple.verifier(replayStore: db.store)
        let now = apple.clock.now.timeIntervalSince1970.rounded(.down)
        let first = apple.minter.token { $0.claims["exp"] = .number(now + 100) }
        // Other bytes, same (sub, nonce, exp): the same claim.
        let sameClaim = apple.minter.token { $0.claims["exp"] = .number(now + 100); $0.claims["iat"] = .number(now - 5) }
        // Same (sub, nonce), another expiry: another token, accepted once of its own.
        let later = apple.minter.token { $0.claims["exp"] = .number(now + 1000) }
        #expect(first != sameClaim)
        #expect(try await db.verify(verifier, token: first, policy: defaultPolicy()).claims != nil)
        #expect(try await db.verify(verifier, token: sameClaim, policy: defaultPolicy()) == .rejected(.replayed))
        #expect(try await db.verify(verifier, token: later, policy: defaultPolicy()).claims != nil)
        #expect(try await db.verify(verifier, token: later, policy: defaultPolicy()) == .rejected(.replayed))
        // The first token is refused as a replay as long as it would otherwise be accepted
        // (exp + 60 s leeway), then as expired; its row outlives it only until a purge.
        apple.clock.advance(by: 159)
        #expect(try await db.verify(verifier, token: first, policy: defaultPolicy()) == .rejected(.replayed))
        apple.clock.advance(by: 2)
        #expect(try await db.verify(verifier, token: first, policy: defaultPolicy()) == .rejected(.expired))
        #expect(try await db.verify(verifier, token: later, policy: defaultPolicy()) == .rejected(.replayed))
    }

    @Test(arguments: Backend.allCases) func aClaimRecordedBeforeTheRekeyStillRefusesItsToken(backend: Backend) async throws {
        // The ledger as version 1 of the schema left it, with one claim the code of then wrote.
        let fresh = try await FreshDatabase(backend, migrations: Array(AppleReplayStore.migrations.prefix(1)))
        let apple = OfflineApple()
        let now = apple.clock.now.timeIntervalSince1970.rounded(.down)
        let token = apple.minter.token { $0.claims["exp"] = .number(now + 100) }
        let nonceClaim = AppleTokenMinter.nonceClaim(for: AppleTokenMinter.defaultRawNonce)
        try await fresh.database.write { db in
            _ = try db.execute("INSERT INTO apple_token_replays (realm_id, key_hash, expires_at) VALUES (?, ?, ?)",
                               .text("acme"), .blob(AppleReplayStore.keyHash(subject: AppleTokenMinter.defaultSubject, nonce: nonceClaim)),
                               .integer(Int64(now) + 160))
        }
        try await fresh.database.migrate(AppleReplayStore.migrations)
        let store = AppleReplayStore()
        let (result, replay) = await apple.verifier(replayStore: store).verifyDeferringReplay(token: token, policy: defaultPolicy())
        #expect(result.claims != nil)
        let claim = try #require(replay)
        #expect(try await fresh.database.write { db in try claim.record(in: db) } == false)
        #expect(try await fresh.database.read { db in try claim.isRecorded(in: db) })
        await fresh.close()
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

    @Test(arguments: Backend.allCases) func storesOnlyAHashOfSubAndNonceWithTheExpiry(backend: Backend) async throws {
        let db = try await ReplayDatabase(backend)
        let apple = OfflineApple()
        let now = Int64(apple.clock.now.timeIntervalSince1970.rounded(.down))
        let token = apple.minter.token { $0.claims["exp"] = .number(Double(now) + 100) }
        #expect(try await db.verify(apple.verifier(replayStore: db.store), token: token, policy: defaultPolicy()).claims != nil)
        let rows = try await db.database.read { db in try db.query("SELECT realm_id, key_hash, expires_at FROM apple_token_replays") }
        #expect(rows.count == 1)
        let stored = try rows[0].bytes("key_hash")
        #expect(stored.count == 32)
        let nonceClaim = AppleTokenMinter.nonceClaim(for: AppleTokenMinter.defaultRawNonce)
        #expect(stored == AppleReplayStore.keyHash(subject: AppleTokenMinter.defaultSubject, nonce: nonceClaim))
        #expect(try rows[0].int("expires_at") == now + 100 + 60)
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

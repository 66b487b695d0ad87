import Foundation
@testable import HeraldGoogle
import HeraldTestSupport
import JOSE
import Login
import Storage
import Testing

@Suite("Google token replay protection")
struct GoogleReplayTests {
    /// Verifies with `verifier` and records its claim in one write transaction, as the login does.
    func login(_ verifier: GoogleIdentityVerifier, _ token: String, on database: any Database,
               policy: GoogleVerificationPolicy = googlePolicy()) async throws -> GoogleVerificationResult {
        let (result, replay) = await verifier.verify(token: token, policy: policy)
        guard case .verified = result, let replay else { return result }
        let first = try await database.write { db in try replay.record(in: db) }
        return first ? result : .rejected(.replayed)
    }

    @Test(arguments: Backend.allCases) func aTokenIsAcceptedOnceAcrossTwoVerifiers(backend: Backend) async throws {
        let fresh = try await FreshDatabase(backend, migrations: GoogleReplayStore.migrations)
        let google = FakeGoogle()
        // Two nodes: each its own verifier and store, one database.
        let first = google.verifier(replayStore: GoogleReplayStore())
        let second = google.verifier(replayStore: GoogleReplayStore())
        let token = google.minter.token()
        #expect(try await login(first, token, on: fresh.database).claims != nil)
        #expect(try await login(second, token, on: fresh.database) == .rejected(.replayed))
        #expect(try await login(first, token, on: fresh.database) == .rejected(.replayed))
        // Another realm has its own record.
        #expect(try await login(second, token, on: fresh.database, policy: googlePolicy(realmID: "globex")).claims != nil)
    }

    @Test(arguments: Backend.allCases) func aTokenWithoutNonceIsStillAcceptedOnce(backend: Backend) async throws {
        let fresh = try await FreshDatabase(backend, migrations: GoogleReplayStore.migrations)
        let google = FakeGoogle()
        let verifier = google.verifier(replayStore: GoogleReplayStore())
        let policy = googlePolicy(nonceRequired: false, rawNonce: nil)
        let token = google.minter.token { $0.claims["nonce"] = nil }
        #expect(try await login(verifier, token, on: fresh.database, policy: policy).claims != nil)
        #expect(try await login(verifier, token, on: fresh.database, policy: policy) == .rejected(.replayed))
    }

    @Test(arguments: Backend.allCases) func storesOnlyAHashUntilExpiryAndLeeway(backend: Backend) async throws {
        let fresh = try await FreshDatabase(backend, migrations: GoogleReplayStore.migrations)
        let google = FakeGoogle()
        #expect(try await login(google.verifier(replayStore: GoogleReplayStore()), google.minter.token(), on: fresh.database).claims != nil)
        let rows = try await fresh.database.read { db in try db.query("SELECT key_hash, expires_at FROM google_token_replays") }
        #expect(rows.count == 1)
        let stored = try rows[0].bytes("key_hash")
        #expect(stored.count == 32)
        for text in [GoogleTokenMinter.defaultSubject, GoogleTokenMinter.defaultNonce] {
            #expect(!String(decoding: stored, as: UTF8.self).contains(text))
        }
        let now = Int64(google.clock.now.timeIntervalSince1970.rounded(.down))
        #expect(try rows[0].int("expires_at") == now + 3600 + 60)
    }

    @Test(arguments: Backend.allCases) func claimsPurgeExpiredRows(backend: Backend) async throws {
        let fresh = try await FreshDatabase(backend, migrations: GoogleReplayStore.migrations)
        let store = GoogleReplayStore(purgeIntervalSeconds: 60, purgeBatchSize: 100)
        func claim(_ key: String, expiresAt: Int64, now: Int64) async throws -> Bool {
            let budget = store.purgeBudget(now: now)
            return try await fresh.database.write { db in
                try store.claim(db, realmID: "acme", keyHash: SHA256.hash(key), expiresAt: expiresAt, now: now, purgingUpTo: budget)
            }
        }
        #expect(try await claim("a", expiresAt: 1_010, now: 1_000))
        #expect(try await claim("b", expiresAt: 9_999, now: 1_020))
        #expect(try await claim("c", expiresAt: 9_999, now: 1_061))
        let count = try await fresh.database.read { db in try db.query("SELECT COUNT(*) AS n FROM google_token_replays") }
        #expect(try count[0].int("n") == 2)
        #expect(GoogleReplayStore.migrations.allSatisfy { $0.module == "google-replay" })
    }
}

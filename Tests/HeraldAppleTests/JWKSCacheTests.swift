import Foundation
@testable import HeraldApple
import HeraldTestSupport
import JOSE
import ProviderKeys
import Synchronization
import Testing

@Suite("Apple JWKS cache", .timeLimit(.minutes(1)))
struct JWKSCacheTests {
    @Test func firstVerificationFetchesOnceAndLaterOnesUseTheCache() async throws {
        let apple = try LiveApple()
        let verifier = apple.verifier()
        for _ in 0..<3 {
            #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        }
        #expect(apple.server.requestCount == 1)
        #expect(apple.cache.metrics.count(.success) == 1)
    }

    @Test func rotatedKeyIsAcceptedAfterOneRefresh() async throws {
        let apple = try LiveApple()
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        apple.server.setDocument(sharedKeys.rotatedDocument)
        apple.clock.advance(by: 31)  // past the refresh interval that the first fetch started
        let rotated = apple.minter.token { $0.kid = sharedKeys.rotatedKeyID; $0.signingKey = sharedKeys.rotated }
        #expect(await verifier.verifyDeferringReplay(token: rotated, policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 2)
        // The old key still verifies, without another fetch.
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 2)
    }

    @Test func floodOfUnknownKidsFetchesAtMostOncePerThirtySeconds() async throws {
        let apple = try LiveApple()
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 1)
        apple.clock.advance(by: 31)
        for index in 0..<25 {
            let token = apple.minter.token { $0.kid = "made-up-\(index)" }
            #expect(await verifier.verifyDeferringReplay(token: token, policy: defaultPolicy()).result == .rejected(.unknownKey))
        }
        #expect(apple.server.requestCount == 2)
        apple.clock.advance(by: 29)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token { $0.kid = "made-up-late" }, policy: defaultPolicy()).result == .rejected(.unknownKey))
        #expect(apple.server.requestCount == 2)
        apple.clock.advance(by: 2)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token { $0.kid = "made-up-after" }, policy: defaultPolicy()).result == .rejected(.unknownKey))
        #expect(apple.server.requestCount == 3)
    }

    @Test func concurrentColdRequestsShareOneFetch() async throws {
        // The server holds the one fetch until all callers wait on it; on a loaded machine (the
        // whole suite runs in parallel) that can outlast the default 5 s total timeout, and a
        // timed-out fetch is not what this test is about.
        let apple = try LiveApple(behaviour: .holdThenServe(cacheControl: nil), totalTimeout: 30)
        let verifier = apple.verifier()
        let callers = 8
        try await withThrowingTaskGroup(of: AppleVerificationResult.self) { group in
            for _ in 0..<callers {
                let token = apple.minter.token()
                group.addTask { await verifier.verifyDeferringReplay(token: token, policy: defaultPolicy()).result }
            }
            // Every caller is suspended on the one fetch, which the server is holding.
            await apple.server.waitForRequests(1)
            while await apple.cache.fetchWaiters < callers { await Task.yield() }
            #expect(apple.server.requestCount == 1)
            apple.server.releaseHeldConnections()
            for try await result in group { #expect(result.claims != nil, "\(result)") }
        }
        #expect(apple.server.requestCount == 1)
    }

    @Test func hangingJWKSDoesNotDelayAVerificationWhoseKeyIsCached() async throws {
        // Generous client timeouts: the hang lasts until the test releases it.
        let apple = try LiveApple(connectTimeout: 120, totalTimeout: 120)
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        apple.server.setBehaviour(.hang)
        apple.clock.advance(by: 31)  // so the unknown kid below may start a refresh

        let stuckFinished = Atomic<Bool>(false)
        let stuck = Task {
            let result = await verifier.verifyDeferringReplay(token: apple.minter.token { $0.kid = "brand-new-kid" }, policy: defaultPolicy()).result
            stuckFinished.store(true, ordering: .sequentiallyConsistent)
            return result
        }
        await apple.server.waitForRequests(2)
        while apple.server.heldConnectionCount < 1 { await Task.yield() }

        // While the refresh hangs, a token signed by a cached key verifies.
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(stuckFinished.load(ordering: .sequentiallyConsistent) == false)
        #expect(apple.server.heldConnectionCount == 1)

        apple.server.releaseHeldConnections()
        // The hung refresh failed, so the unknown kid cannot be decided.
        #expect(await stuck.value.isUnavailable)
    }

    /// What a login reads without awaiting the actor (no thread hop): a cached key, only while
    /// the keys are fresh; anything else is left to `signingKey(for:)`, which may fetch.
    @Test func freshKeysAreReadWithoutTheActorUntilTheyExpire() async throws {
        let apple = try LiveApple(behaviour: .serve(cacheControl: "public, max-age=300"))
        let keyID = sharedKeys.rsaKeyID
        #expect(apple.cache.freshSigningKey(for: keyID) == nil)  // nothing fetched yet
        #expect(Self.isFound(await apple.cache.resolve(keyID)))  // fetches
        #expect(apple.cache.freshSigningKey(for: keyID)?.jwk(keyID: keyID) == sharedKeys.rsa.publicKey.jwk(keyID: keyID))
        #expect(apple.cache.freshSigningKey(for: "made-up") == nil)
        #expect(apple.server.requestCount == 1)

        apple.clock.advance(by: 301)
        #expect(apple.cache.freshSigningKey(for: keyID) == nil)  // stale: only the actor decides
        #expect(Self.isFound(await apple.cache.resolve(keyID)))  // after a refresh
        #expect(apple.server.requestCount == 2)
        #expect(apple.cache.freshSigningKey(for: keyID) != nil)
    }

    private static func isFound(_ lookup: SigningKeyLookup) -> Bool {
        if case .found = lookup { return true }
        return false
    }

    @Test func staleKeysKeepVerifyingWhileRefreshFails() async throws {
        let apple = try LiveApple(behaviour: .serve(cacheControl: "public, max-age=300"))
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        apple.server.setBehaviour(.status(500))
        apple.clock.advance(by: 301)

        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 2)
        // Signatures are still checked with stale keys.
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token { $0.tamperSignature = true }, policy: defaultPolicy()).result == .rejected(.signature))
        // A kid the stale set lacks cannot be decided.
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token { $0.kid = "unknown" }, policy: defaultPolicy()).result.isUnavailable)
        #expect(apple.cache.metrics.count(.httpError) == 1)

        // Seven days past freshness the stale keys are no longer trusted.
        apple.clock.advance(by: 7 * 24 * 3600)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.isUnavailable)
        #expect(apple.server.requestCount == 3)
    }

    @Test func healthShowsLastSuccessKeyIDsAndLastFailure() async throws {
        let apple = try LiveApple(behaviour: .serve(cacheControl: "public, max-age=300"))
        #expect(apple.cache.metrics.lastSuccessAt == nil && apple.cache.metrics.keyIDs.isEmpty)
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        let fetchedAt = apple.clock.now
        var health = apple.cache.metrics
        #expect(health.lastSuccessAt == fetchedAt)
        #expect(health.freshUntil == fetchedAt.addingTimeInterval(300))
        #expect(!health.keyIDs.isEmpty)
        #expect(health.lastFailure == nil && !health.lastFetchFailed)

        apple.server.setBehaviour(.status(500))
        apple.clock.advance(by: 301)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        health = apple.cache.metrics
        #expect(health.lastFailure?.outcome == .httpError && health.lastFailure?.at == apple.clock.now)
        #expect(health.lastFetchFailed)
        #expect(health.lastSuccessAt == fetchedAt, "the keys held are still the first fetch's")
    }

    @Test func coldCacheWithDeadJWKSIsUnavailableWithRetryAfter() async throws {
        let apple = try LiveApple(behaviour: .status(503))
        let result = await apple.verifier().verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result
        guard case .unavailable(let retryAfter) = result else {
            Issue.record("expected unavailable, got \(result)")
            return
        }
        #expect(retryAfter == 30)
        apple.clock.advance(by: 10)
        // Within the refresh interval no new fetch starts; the hint counts down.
        #expect(await apple.verifier().verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result == .unavailable(retryAfterSeconds: 20))
        #expect(apple.server.requestCount == 1)
    }

    @Test func unreachableJWKSIsUnavailableNotRejected() async throws {
        let apple = try LiveApple()
        apple.server.stop()
        let result = await apple.verifier().verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result
        #expect(result.isUnavailable)
        #expect(apple.cache.metrics.count(.networkError) == 1)
    }

    @Test func maxAgeFromCacheControlIsHonoured() async throws {
        let apple = try LiveApple(behaviour: .serve(cacheControl: "max-age=600"))
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        apple.clock.advance(by: 599)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 1)
        apple.clock.advance(by: 2)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 2)
    }

    @Test func tinyMaxAgeIsRaisedToFiveMinutes() async throws {
        let apple = try LiveApple(behaviour: .serve(cacheControl: "max-age=10"))
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        apple.clock.advance(by: 299)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 1)
        apple.clock.advance(by: 2)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 2)
    }

    @Test func missingMaxAgeDefaultsToOneDay() async throws {
        let apple = try LiveApple()
        let verifier = apple.verifier()
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        apple.clock.advance(by: 24 * 3600 - 1)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 1)
        apple.clock.advance(by: 2)
        #expect(await verifier.verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.server.requestCount == 2)
    }

    @Test func malformedKeysAreSkippedAndCounted() async throws {
        var keys = [sharedKeys.rsa.publicKey.jwk(keyID: sharedKeys.rsaKeyID)]
        keys.append(JWK(kty: "RSA", kid: "broken-rsa", n: "AQAB", e: "AQAB"))
        keys.append(JWK(kty: "oct", kid: "symmetric"))
        let apple = try LiveApple(document: JWKSet.document(keys))
        #expect(await apple.verifier().verifyDeferringReplay(token: apple.minter.token(), policy: defaultPolicy()).result.claims != nil)
        #expect(apple.cache.metrics.skippedKeys == 2)
        #expect(apple.cache.metrics.count(.success) == 1)
    }
}

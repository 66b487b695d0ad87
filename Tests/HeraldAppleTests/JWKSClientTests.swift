import Foundation
import HeraldApple
import HeraldTestSupport
import JOSE
import Testing

@Suite("Apple JWKS client", .timeLimit(.minutes(1)))
struct JWKSClientTests {
    func client(_ server: FakeJWKSServer, connectTimeout: TimeInterval = 2, totalTimeout: TimeInterval = 5) -> AppleJWKSClient {
        var configuration = AppleJWKSClientConfiguration(url: server.url)
        configuration.connectTimeout = connectTimeout
        configuration.totalTimeout = totalTimeout
        return AppleJWKSClient(configuration: configuration)
    }

    @Test func defaultConfigurationIsApplesKeysWithContractLimits() {
        let configuration = AppleJWKSClientConfiguration()
        #expect(configuration.url.absoluteString == "https://appleid.apple.com/auth/keys")
        #expect(configuration.connectTimeout == 2)
        #expect(configuration.totalTimeout == 5)
        #expect(configuration.maximumResponseBytes == 65_536)
    }

    @Test func fetchReturnsKeysAndCacheControl() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        server.setBehaviour(.serve(cacheControl: "max-age=1234, public"))
        guard case .success(let keySet, let cacheControl) = await client(server).fetchKeySet() else {
            Issue.record("fetch failed")
            return
        }
        #expect(Set(keySet.keys.keys) == [sharedKeys.rsaKeyID, sharedKeys.ecKeyID])
        #expect(cacheControl == "max-age=1234, public")
    }

    @Test func non2xxIsHTTPError() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        server.setBehaviour(.status(500))
        #expect(await client(server).fetchKeySet().failureOutcome == .httpError)
        server.setBehaviour(.status(404))
        #expect(await client(server).fetchKeySet().failureOutcome == .httpError)
    }

    /// Issue #20: the client followed a redirect to any origin. It follows none: the 3xx is an
    /// upstream failure, and the redirect target is never asked.
    @Test func redirectIsRefusedAndNotFollowed() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        let elsewhere = try FakeJWKSServer(document: sharedKeys.document)
        defer { elsewhere.stop() }
        elsewhere.setBehaviour(.serve(cacheControl: nil))
        server.setBehaviour(.redirect(location: elsewhere.url.absoluteString))
        #expect(await client(server).fetchKeySet().failureOutcome == .httpError)
        server.setBehaviour(.redirect(location: server.url.absoluteString + "?again"))
        #expect(await client(server).fetchKeySet().failureOutcome == .httpError)
        #expect(elsewhere.requestCount == 0)
        #expect(server.requestCount == 2)
    }

    @Test func garbageIsInvalid() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        server.setBehaviour(.garbage)
        #expect(await client(server).fetchKeySet().failureOutcome == .invalid)
    }

    @Test func keySetWithoutUsableKeysIsInvalid() async throws {
        let server = try FakeJWKSServer(document: JWKSet.document([JWK(kty: "oct", kid: "k")]))
        defer { server.stop() }
        #expect(await client(server).fetchKeySet().failureOutcome == .invalid)
    }

    @Test func bodyOverTheCapIsTooLargeAndAbandoned() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        // Without Content-Length, streamed: the client must count and stop; the server would send 10 MiB.
        server.setBehaviour(.oversize(bytes: 10 << 20))
        #expect(await client(server).fetchKeySet().failureOutcome == .tooLarge)
    }

    @Test func announcedOversizeBodyIsTooLarge() async throws {
        let big = Array(#"{"keys":[],"pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 70_000) + Array(#""}"#.utf8)
        let server = try FakeJWKSServer(document: big)
        defer { server.stop() }
        #expect(await client(server).fetchKeySet().failureOutcome == .tooLarge)
    }

    @Test func hangingServerTimesOut() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        server.setBehaviour(.hang)
        #expect(await client(server, connectTimeout: 0.3, totalTimeout: 0.6).fetchKeySet().failureOutcome == .timeout)
    }

    @Test func refusedConnectionIsNetworkError() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        let client = client(server)
        server.stop()
        #expect(await client.fetchKeySet().failureOutcome == .networkError)
    }

    @Test func metricsCountEveryOutcomeThroughTheCache() async throws {
        let server = try FakeJWKSServer(document: sharedKeys.document)
        defer { server.stop() }
        let clock = TestClock()
        var configuration = AppleJWKSClientConfiguration(url: server.url)
        configuration.connectTimeout = 2
        configuration.totalTimeout = 3
        let cache = AppleJWKSCache(configuration: configuration, now: clock.closure)
        let sequence: [(FakeJWKSServer.Behaviour, AppleJWKSFetchOutcome)] = [
            (.status(502), .httpError), (.garbage, .invalid), (.oversize(bytes: 1 << 20), .tooLarge),
            (.hang, .timeout), (.serve(cacheControl: nil), .success),
        ]
        for (behaviour, _) in sequence {
            server.setBehaviour(behaviour)
            // An unknown kid makes the cache fetch (the clock steps past the refresh interval).
            _ = await cache.signingKey(for: "unknown-kid")
            clock.advance(by: 31)
        }
        server.stop()
        let metrics = cache.metrics
        for (_, outcome) in sequence { #expect(metrics.count(outcome) == 1, "\(outcome): \(metrics.fetches)") }
        #expect(metrics.totalFetches == sequence.count)
    }
}

extension AppleJWKSFetchResult {
    var failureOutcome: AppleJWKSFetchOutcome? {
        if case .failure(let outcome) = self { return outcome }
        return .success
    }
}

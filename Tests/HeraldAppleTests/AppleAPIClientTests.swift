import Foundation
import HeraldApple
import HeraldTestSupport
import Testing

/// `AppleAPIClient` against the loopback fake Apple: how Apple's answers become failures, and
/// the cap on exchanges waiting at once (both doors, native and web, share one client).
@Suite("Apple API client")
struct AppleAPIClientTests {
    @Test("Apple's 4xx refusals are named (invalid_client, any other 4xx refused); a 5xx is an outage")
    func refusalsAreToldFromOutages() async throws {
        let apple = try FakeAppleAPIServer()
        let client = AppleAPIClient(baseURL: try #require(URL(string: apple.baseURL)))
        // The fake checks the secret first: a junk one is invalid_client.
        let badSecret = await client.exchange(code: "c", clientID: "com.example.app", clientSecret: "junk")
        #expect(badSecret.failure == .invalidClient)
        #expect(badSecret.failure?.isRefusal == true)
        apple.fail(with: 400)
        #expect(await client.exchange(code: "c", clientID: "a", clientSecret: "junk").failure == .refused)
        for status in [500, 502, 503] {
            apple.fail(with: status)
            let outage = await client.exchange(code: "c", clientID: "a", clientSecret: "junk").failure
            #expect(outage == .httpError, "status \(status)")
            #expect(outage?.isRefusal == false)
        }
        await apple.stop()
    }

    @Test("at most maximumExchangesInFlight exchanges wait on Apple; the rest fail at once as busy")
    func exchangesWaitingOnAppleAreCapped() async throws {
        #expect(AppleAPIClient.maximumExchangesInFlight == 32)
        let apple = try FakeAppleAPIServer()
        apple.holdTokenRequests()
        let client = AppleAPIClient(baseURL: try #require(URL(string: apple.baseURL)), maximumExchangesInFlight: 4)
        try await withThrowingTaskGroup(of: AppleAPIFailure?.self) { group in
            for index in 0..<10 {
                group.addTask { await client.exchange(code: "code-\(index)", clientID: "a", clientSecret: "junk").failure }
            }
            // Six are refused without a call while four wait on the held Apple.
            var busy = 0
            while busy < 6, let failure = try await group.next() {
                #expect(failure == .busy)
                busy += 1
            }
            let deadline = Date().addingTimeInterval(30)
            while apple.heldTokenRequests.now < 4 {
                guard Date() < deadline else { Issue.record("the four admitted exchanges never reached Apple"); break }
                try await Task.sleep(for: .milliseconds(5))
            }
            apple.releaseTokenRequests()
            var answered: [AppleAPIFailure?] = []
            for try await failure in group { answered.append(failure) }
            #expect(answered.count == 4 && !answered.contains(.busy))
        }
        #expect(apple.heldTokenRequests.most == 4)
        #expect(apple.calls.count == 4)
        // The slots were given back: an exchange now reaches Apple.
        #expect(await client.exchange(code: "later", clientID: "a", clientSecret: "junk").failure == .invalidClient)
        await apple.stop()
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
@testable import HTTPServer

@Suite("HTTPServer concurrency")
struct ServerConcurrencyTests {
    @Test(arguments: [HTTPServerConfiguration.HandlerStart.immediate, .pooled])
    func slowHandlerDoesNotBlockOtherRequests(start: HTTPServerConfiguration.HandlerStart) async throws {
        let entered = OneShotSignal(), release = OneShotSignal()
        let fastAnswered = Counter()
        // One MHD thread: if it waited for the slow handler, no fast request could complete.
        try await withServer(configure: { $0.threadCount = 1; $0.handlerStart = start }, routes: { router in
            router.add("GET", "/slow") { _ in
                entered.fire()
                await release.wait()
                return text(200, "slow, after \(fastAnswered.value) fast")
            }
            router.add("GET", "/fast/:n") { request in text(200, request.pathParameters["n"] ?? "") }
        }) { server in
            let slow = await entered.startRequest { try await server.fetch("/slow") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for n in 0..<10 {
                    group.addTask {
                        let response = try await server.fetch("/fast/\(n)")
                        #expect(response.status == 200)
                        #expect(response.text == "\(n)")
                        fastAnswered.increment()
                    }
                }
                try await group.waitForAll()
            }
            release.fire()
            let slowResponse = try await slow.value
            #expect(slowResponse.status == 200)
            #expect(slowResponse.text == "slow, after 10 fast")
        }
    }

    @Test func twoHundredConcurrentRequestsAllSucceed() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 200
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        try await withServer(routes: { router in
            router.add("POST", "/double/:n") { request in
                try? await Task.sleep(for: .milliseconds(5))   // overlap handlers
                return text(200, "\(2 * (Int(request.pathParameters["n"] ?? "") ?? 0)):\(request.body.count)")
            }
        }) { server in
            let results = try await withThrowingTaskGroup(of: (Int, FetchedResponse).self) { group in
                for n in 0..<200 {
                    group.addTask {
                        (n, try await server.fetch("POST", "/double/\(n)", body: [UInt8](repeating: 1, count: n),
                                                   session: session))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
            }
            #expect(results.count == 200)
            for (n, response) in results {
                #expect(response.status == 200)
                #expect(response.text == "\(2 * n):\(n)")
            }
        }
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() async throws {
        try await withServer(routes: { router in
            router.add("GET", "/n/:n") { request in text(200, request.pathParameters["n"] ?? "") }
            router.add("POST", "/echo") { request in HTTPResponse(status: 200, body: request.body) }
        }) { server in
            let port = server.boundPort
            let responses = try await RawHTTPConnection.run { () -> [RawResponse] in
                let connection = try RawHTTPConnection(port: port)
                var responses: [RawResponse] = []
                try connection.send("GET /n/1 HTTP/1.1\r\nHost: t\r\n\r\n")
                responses.append(try connection.readResponse())
                try connection.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc")
                responses.append(try connection.readResponse())
                try connection.send("GET /missing HTTP/1.1\r\nHost: t\r\n\r\n")
                responses.append(try connection.readResponse())
                try connection.send("GET /n/4 HTTP/1.1\r\nHost: t\r\n\r\n")
                responses.append(try connection.readResponse())
                return responses
            }
            #expect(responses.map(\.status) == [200, 200, 404, 200])
            #expect(responses.map(\.text) == ["1", "abc", "error 404", "4"])
            #expect(responses.allSatisfy { $0.header("Connection")?.lowercased() != "close" })
        }
    }
}

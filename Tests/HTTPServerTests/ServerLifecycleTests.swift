import Foundation
import Synchronization
import Testing
@testable import HTTPServer
#if canImport(Glibc)
import Glibc
#endif

@Suite("HTTPServer start and shutdown")
struct ServerLifecycleTests {
    @Test(arguments: [HTTPServerConfiguration.HandlerStart.immediate, .pooled])
    func gracefulShutdownFinishesInFlightRequestThenRefusesConnections(
        start: HTTPServerConfiguration.HandlerStart
    ) async throws {
        let entered = OneShotSignal(), release = OneShotSignal()
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.handlerStart = start
        var router = Router()
        let marker = Self.marker()
        router.add("GET", marker) { _ in text(200, "mine") }
        router.add("GET", "/slow") { _ in
            entered.fire()
            await release.wait()
            return text(200, "finished")
        }
        let server = HTTPServer(configuration: configuration, router: router, errorResponder: plainErrorResponder)
        try server.start()
        let port = server.boundPort

        let inFlight = await entered.startRequest { try await server.fetch("/slow") }
        let shutdown = Task { await server.shutdown() }
        await server.stoppedAccepting.wait()
        #expect(await RawHTTPConnection.serverIsGone(port: port, marker: marker))

        release.fire()
        let response = try await inFlight.value
        #expect(response.status == 200)
        #expect(response.text == "finished")
        await shutdown.value
        #expect(await RawHTTPConnection.serverIsGone(port: port, marker: marker))
        #expect(server.liveRequestCount == 0)
    }

    @Test(arguments: [HTTPServerConfiguration.HandlerStart.immediate, .pooled])
    func handlerOutlivingTheGracePeriodIsCancelledAndAnswered503(start: HTTPServerConfiguration.HandlerStart) async throws {
        let entered = OneShotSignal(), sawCancellation = OneShotSignal()
        try await withServer(configure: { $0.shutdownGracePeriodSeconds = 0.2; $0.handlerStart = start }, routes: { router in
            router.add("GET", "/stuck") { _ in
                entered.fire()
                try? await Task.sleep(for: .seconds(3_600))
                if Task.isCancelled { sawCancellation.fire() }
                return text(200, "too late")
            }
        }) { server in
            let stuck = await entered.startRequest { try await server.fetch("/stuck") }
            await server.shutdown()
            let response = try await stuck.value
            #expect(response.status == 503)
            #expect(response.text == "error 503")
            await sawCancellation.wait()
        }
    }

    @Test func shutdownIsIdempotentAndWorksBeforeStart() async throws {
        let idle = HTTPServer(configuration: HTTPServerConfiguration(), router: Router(), errorResponder: plainErrorResponder)
        await idle.shutdown()
        #expect(throws: HTTPServerError.self) { try idle.start() }

        let marker = Self.marker()
        try await withServer(routes: { $0.add("GET", marker) { _ in text(200, "mine") } }) { server in
            async let first: Void = server.shutdown()
            async let second: Void = server.shutdown()
            _ = await (first, second)
            #expect(await RawHTTPConnection.serverIsGone(port: server.boundPort, marker: marker))
        }
    }

    @Test func startFailsWhenThePortIsTaken() async throws {
        try await withServer(routes: { _ in }) { first in
            var configuration = HTTPServerConfiguration()
            configuration.port = first.boundPort
            let second = HTTPServer(configuration: configuration, router: Router(), errorResponder: plainErrorResponder)
            let error = try #require(throws: HTTPServerError.self) { try second.start() }
            #expect(error.code == .startFailed)
            #expect(error.message.contains("\(first.boundPort)"))
        }
    }

    @Test(arguments: ["localhost", "256.1.1.1", "", "127.0.0.1:80"])
    func hostMustBeAnIPLiteral(host: String) {
        var configuration = HTTPServerConfiguration()
        configuration.host = host
        configuration.port = 0
        let server = HTTPServer(configuration: configuration, router: Router(), errorResponder: plainErrorResponder)
        #expect(throws: HTTPServerError(code: .invalidConfiguration, message: "host must be an IPv4 or IPv6 literal")) {
            try server.start()
        }
    }

    @Test func unusableLimitsAreRejectedBeforeBinding() {
        let broken: [(inout HTTPServerConfiguration) -> Void] = [
            { $0.threadCount = 0 }, { $0.connectionLimit = 0 }, { $0.perIPConnectionLimit = -1 },
            { $0.connectionMemoryLimitBytes = 100 }, { $0.maxBodyBytes = -1 }, { $0.connectionTimeoutSeconds = -5 },
            { $0.shutdownGracePeriodSeconds = -.infinity }, { $0.maxRequestTargetBytes = 0 }, { $0.maxHeaderBytes = 0 },
            { $0.maxHeaderCount = 0 },
        ]
        for breakIt in broken {
            var configuration = HTTPServerConfiguration()
            configuration.port = 0
            breakIt(&configuration)
            let server = HTTPServer(configuration: configuration, router: Router(), errorResponder: plainErrorResponder)
            let error = #expect(throws: HTTPServerError.self) { try server.start() }
            #expect(error?.code == .invalidConfiguration)
            #expect(server.boundPort == 0)
        }
    }

    @Test func startingTwiceFails() async throws {
        try await withServer(routes: { _ in }) { server in
            let error = try #require(throws: HTTPServerError.self) { try server.start() }
            #expect(error.code == .alreadyStarted)
        }
    }

    @Test func servesOverIPv6Loopback() async throws {
        var configuration = HTTPServerConfiguration()
        configuration.host = "::1"
        configuration.port = 0
        var router = Router()
        router.add("GET", "/peer") { request in text(200, request.peerAddress) }
        let server = HTTPServer(configuration: configuration, router: router, errorResponder: plainErrorResponder)
        do {
            try server.start()
        } catch {
            // A machine without IPv6 on loopback cannot run this test; anything else is a failure.
            try #require(error.message.contains("Address family not supported") || error.message.contains("Cannot assign"),
                         "\(error)")
            return
        }
        // URLSession on Linux rejects bracketed IPv6 URLs, so this one goes over a raw socket.
        let response = try await RawHTTPConnection.exchange(port: server.boundPort, ipv6: true,
                                                            "GET /peer HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(response.text == "::1")
        await server.shutdown()
    }

    @Test func droppingARunningServerStopsIt() async throws {
        var port: UInt16 = 0
        let marker = Self.marker()
        do {
            var configuration = HTTPServerConfiguration()
            configuration.port = 0
            var router = Router()
            router.add("GET", marker) { _ in text(200, "mine") }
            let server = HTTPServer(configuration: configuration, router: router, errorResponder: plainErrorResponder)
            try server.start()
            port = server.boundPort
            #expect(await RawHTTPConnection.connectErrno(port: port) == 0)
            // The check below can fail: a running server is not taken for gone.
            #expect(await !RawHTTPConnection.serverIsGone(port: port, marker: marker))
        }
        #expect(await RawHTTPConnection.serverIsGone(port: port, marker: marker))
    }

    /// A path no other test's server has, to tell this server from one that got its freed port.
    private static func marker() -> String { "/lifecycle-\(UUID().uuidString)" }
}

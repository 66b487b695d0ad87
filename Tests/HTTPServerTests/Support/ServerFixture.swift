import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
@testable import HTTPServer

/// Server errors rendered as "error <status>" so tests can tell them from handler output.
let plainErrorResponder: ErrorResponder = { status, _ in
    HTTPResponse(status: status, headers: ["Content-Type": "text/plain"], body: Array("error \(status)".utf8))
}

func text(_ status: Int = 200, _ body: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Array(body.utf8))
}

/// Collects access-log entries; the server logs when it queues a response, so an entry is
/// recorded before the client can read that response.
final class AccessLogRecorder: Sendable {
    private let recorded = Mutex<[AccessLogEntry]>([])
    var entries: [AccessLogEntry] { recorded.withLock { $0 } }
    var sink: @Sendable (AccessLogEntry) -> Void { { entry in self.recorded.withLock { $0.append(entry) } } }
}

/// A counter shared between a test and its handlers.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}

extension OneShotSignal {
    /// Starts `request` and waits until the handler signals `self` or the request ends,
    /// whichever comes first, so a failing client fails the test instead of hanging it.
    func startRequest<T: Sendable>(_ request: @escaping @Sendable () async throws -> T) async -> Task<T, Error> {
        let task = Task {
            defer { self.fire() }
            return try await request()
        }
        await wait()
        return task
    }
}

/// Starts a server on 127.0.0.1:0, runs `body`, and always shuts the server down.
func withServer<T>(configure: (inout HTTPServerConfiguration) -> Void = { _ in },
                   accessLog: @escaping @Sendable (AccessLogEntry) -> Void = { _ in },
                   routes: (inout Router) -> Void,
                   _ body: (HTTPServer) async throws -> T) async throws -> T {
    var configuration = HTTPServerConfiguration()
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configure(&configuration)
    var router = Router()
    routes(&router)
    let server = HTTPServer(configuration: configuration, router: router, errorResponder: plainErrorResponder,
                            accessLog: accessLog)
    try server.start()
    do {
        let result = try await body(server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

/// A response as URLSession saw it.
struct FetchedResponse: Sendable {
    let status: Int
    let headers: [String: String]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

extension HTTPServer {
    func url(_ pathAndQuery: String) -> URL {
        URL(string: "http://127.0.0.1:\(boundPort)\(pathAndQuery)")!
    }

    /// A GET through URLSession.
    func fetch(_ pathAndQuery: String, headers: [String: String] = [:]) async throws -> FetchedResponse {
        try await fetch("GET", pathAndQuery, headers: headers)
    }

    /// One request through URLSession (a real client, with its own header handling). Without
    /// a `session`, a fresh one is used: a shared session keeps idle connections to servers
    /// that are gone, and when a later test's server gets the same ephemeral port, libcurl
    /// reuses the dead connection and fails the request.
    func fetch(_ method: String, _ pathAndQuery: String, body: [UInt8]? = nil,
               headers: [String: String] = [:], session: URLSession? = nil) async throws -> FetchedResponse {
        let ownSession = session == nil ? URLSession(configuration: .ephemeral) : nil
        defer { ownSession?.finishTasksAndInvalidate() }
        let session = session ?? ownSession!
        var request = URLRequest(url: url(pathAndQuery))
        request.timeoutInterval = 20   // a hung server fails the test instead of stalling it
        request.httpMethod = method
        if let body { request.httpBody = Data(body) }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            fields[String(describing: name)] = String(describing: value)
        }
        return FetchedResponse(status: http.statusCode, headers: fields, body: Array(data))
    }
}

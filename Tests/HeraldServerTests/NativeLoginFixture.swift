import Foundation
import HeraldTestSupport
import JOSE
import Synchronization
@testable import HeraldServer

/// Apple's fake keys are expensive to generate; every native-login test signs with the same ones.
let fakeAppleKeys: FakeAppleKeys = try! FakeAppleKeys()

/// A running Herald wired to a fake Apple JWKS server on loopback, with realm `acme`: Apple
/// provider enabled (Services ID `com.example.herald.web`, Bundle ID = the minter's default
/// audience), a first-party client `ios-app` and a third-party client `partner`.
final class NativeLoginFixture: Sendable {
    static let realm = "acme"
    static let firstParty = "ios-app"
    static let thirdParty = "partner"

    let herald: RunningHerald
    let apple: FakeJWKSServer
    let clock: TestClock?
    private let nonceCounter = Atomic<Int>(0)

    /// Starts everything on `backend`; `realmFields` adjust the realm (e.g. a tight rate limit).
    static func with<T>(backend: Backend = .sqlite, realmFields: [String: JSONValue] = [:], clock: TestClock? = nil,
                        provision: Bool = true, configure: (inout HeraldConfiguration) -> Void = { _ in },
                        maintenancePause: (@Sendable () async -> Void)? = nil,
                        _ body: (NativeLoginFixture) async throws -> T) async throws -> T {
        let apple = try FakeJWKSServer(document: fakeAppleKeys.document)
        defer { apple.stop() }
        let now: @Sendable () -> Date = if let clock { clock.closure } else { { Date() } }
        return try await RunningHerald.with(backend: backend, configure: { configuration in
            configuration.appleJWKSURL = apple.url.absoluteString
            configure(&configuration)
        }, now: now, maintenancePause: maintenancePause) { herald in
            let fixture = NativeLoginFixture(herald: herald, apple: apple, clock: clock)
            if provision { try await fixture.provision(realmFields: realmFields) }
            return try await body(fixture)
        }
    }

    init(herald: RunningHerald, apple: FakeJWKSServer, clock: TestClock?) {
        self.herald = herald
        self.apple = apple
        self.clock = clock
    }

    func provision(realmFields: [String: JSONValue]) async throws {
        var fields = realmFields
        if fields["rateLimit"] == nil { fields["rateLimit"] = ["failuresPerWindow": 1000, "windowSeconds": 300] }
        try await createRealm(Self.realm, fields)
        try expectStatus(200, await admin("PUT", "/api/admin/realms/acme/providers/apple", json: [
            "enabled": true, "clientId": "com.example.herald.web", "audiences": [.string(AppleTokenMinter.defaultAudience)],
        ]))
        try expectStatus(201, await admin("POST", "/api/admin/realms/acme/clients", json: [
            "clientId": .string(Self.firstParty), "name": "iOS app", "firstParty": true,
        ]))
        try expectStatus(201, await admin("POST", "/api/admin/realms/acme/clients", json: [
            "clientId": .string(Self.thirdParty), "name": "Partner", "redirectUris": ["https://partner.example/callback"],
        ]))
    }

    /// A clock standing one second into the current `seconds`-long window, so a test of the
    /// (fixed-window) failure limit never straddles a window boundary of the real clock.
    static func clockInsideOneWindow(of seconds: Int = 300) -> TestClock {
        let now = Int(Date().timeIntervalSince1970)
        return TestClock(Date(timeIntervalSince1970: TimeInterval(now - now % seconds + 1)))
    }

    var minter: AppleTokenMinter { AppleTokenMinter(keys: fakeAppleKeys, now: clock?.now ?? Date()) }

    /// A fresh raw nonce (each login must bring its own: (sub, nonce) is single-use).
    func freshNonce() -> String {
        "nonce-\(nonceCounter.add(1, ordering: .relaxed).newValue)-\(UUID().uuidString)"
    }

    /// A valid identity token for `subject` bound to `nonce`, changed by `customize`.
    func token(subject: String = AppleTokenMinter.defaultSubject, nonce: String, email: String? = "someone@example.com",
               _ customize: (inout AppleTokenSpec) -> Void = { _ in }) -> String {
        minter.token { spec in
            spec.claims["sub"] = .string(subject)
            spec.claims["nonce"] = .string(AppleTokenMinter.nonceClaim(for: nonce))
            if let email { spec.claims["email"] = .string(email) } else {
                spec.claims["email"] = nil
                spec.claims["email_verified"] = nil
            }
            customize(&spec)
        }
    }

    /// POSTs a native-login request (blocking: only for test threads, see `concurrently`).
    func loginBlocking(token: String, nonce: String?, clientID: String = NativeLoginFixture.firstParty,
               realm: String = NativeLoginFixture.realm, extra: [String: JSONValue] = [:],
               headers: [(String, String)] = []) throws -> TestHTTPClient.Response {
        var body: [String: JSONValue] = ["identityToken": .string(token), "clientId": .string(clientID)]
        if let nonce { body["nonce"] = .string(nonce) }
        for (key, value) in extra { body[key] = value }
        return try herald.client.send("POST", "/api/oauth/\(realm)/apple/native-login", json: .object(body), headers: headers)
    }

    /// POSTs a native-login request.
    func login(token: String, nonce: String?, clientID: String = NativeLoginFixture.firstParty,
               realm: String = NativeLoginFixture.realm, extra: [String: JSONValue] = [:],
               headers: [(String, String)] = []) async throws -> TestHTTPClient.Response {
        try await offPool { [self] in
            try loginBlocking(token: token, nonce: nonce, clientID: clientID, realm: realm, extra: extra, headers: headers)
        }
    }

    /// A successful first-party login of `subject`; returns the response JSON.
    @discardableResult
    func loginOK(subject: String = AppleTokenMinter.defaultSubject, email: String? = "someone@example.com",
                 extra: [String: JSONValue] = [:]) async throws -> [String: JSONValue] {
        let nonce = freshNonce()
        let response = try await login(token: token(subject: subject, nonce: nonce, email: email), nonce: nonce, extra: extra)
        guard response.status == 200 else { throw TestClientError("login: \(response.status) \(response.text)") }
        return response.json
    }

    func me(_ accessToken: String?) async throws -> TestHTTPClient.Response {
        try await send("GET", "/api/auth/acme/me",
                               headers: accessToken.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    func refresh(_ refreshToken: String, clientID: String = NativeLoginFixture.firstParty,
                 headers: [(String, String)] = []) async throws -> TestHTTPClient.Response {
        try await offPool { [self] in try refreshBlocking(refreshToken, clientID: clientID, headers: headers) }
    }

    /// Refresh, blocking (for `concurrently`).
    func refreshBlocking(_ refreshToken: String, clientID: String = NativeLoginFixture.firstParty,
                         headers: [(String, String)] = []) throws -> TestHTTPClient.Response {
        try herald.client.send("POST", "/api/auth/acme/session/refresh",
                               json: ["refreshToken": .string(refreshToken), "clientId": .string(clientID)], headers: headers)
    }
}

extension NativeLoginFixture {
    /// A request without JSON, sent off the cooperative pool.
    func send(_ method: String, _ path: String, headers: [(String, String)] = []) async throws -> TestHTTPClient.Response {
        let client = herald.client
        return try await offPool { try client.send(method, path, headers: headers) }
    }

    /// A JSON request, sent off the cooperative pool.
    func send(_ method: String, _ path: String, json: JSONValue, headers: [(String, String)] = []) async throws
        -> TestHTTPClient.Response {
        let client = herald.client
        return try await offPool { try client.send(method, path, json: json, headers: headers) }
    }

    /// An admin request, sent off the cooperative pool.
    func admin(_ method: String, _ path: String, json: JSONValue? = nil, reason: String? = nil,
               token: String? = RunningHerald.adminToken) async throws -> TestHTTPClient.Response {
        try await herald.admin(method, path, json: json, reason: reason, token: token)
    }

    func createRealm(_ id: String, _ fields: [String: JSONValue] = [:]) async throws {
        _ = try await herald.createRealm(id, fields)
    }
}

/// Runs a blocking test-client call on its own thread. The test client blocks in recv(); on
/// the two-thread cooperative pool, two tests doing that at once would starve the server's
/// handlers until the socket timeout.
func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

func expectStatus(_ status: Int, _ response: TestHTTPClient.Response) throws {
    guard response.status == status else { throw TestClientError("expected \(status), got \(response.status): \(response.text)") }
}

extension TestHTTPClient.Response {
    /// The envelope's `code`.
    var code: String? { json["code"]?.stringValue }
    func string(_ key: String) -> String { json[key]?.stringValue ?? "" }
}

extension [String: JSONValue] {
    /// A member's string value, or "" when it is missing or not a string.
    func string(_ key: String) -> String { self[key]?.stringValue ?? "" }
}

/// Runs `count` blocking requests on their own threads, released together, and returns the
/// responses in index order (the test client blocks, so the cooperative pool would serialize them).
func concurrently(_ count: Int, _ body: @escaping @Sendable (Int) throws -> TestHTTPClient.Response) async
    -> [Result<TestHTTPClient.Response, any Error>] {
    let results = Mutex<[Int: Result<TestHTTPClient.Response, any Error>]>([:])
    let gate = StartGate()
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            gate.wait()
            let result = Result { try body(index) }
            results.withLock { $0[index] = result }
            group.leave()
        }.start()
    }
    gate.open()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        group.notify(queue: .global()) { continuation.resume() }
    }
    return results.withLock { all in (0..<count).map { all[$0]! } }
}

/// Where the threads of `concurrently` wait until all exist, so their requests overlap.
final class StartGate: Sendable {
    private let condition = NSCondition()
    private let isOpen = Mutex(false)

    /// Blocks the calling thread until `open()`.
    func wait() {
        condition.lock()
        while !isOpen.withLock({ $0 }) { condition.wait() }
        condition.unlock()
    }

    /// Releases every waiting thread (synchronous: locks are not for async contexts).
    func open() {
        condition.lock()
        isOpen.withLock { $0 = true }
        condition.broadcast()
        condition.unlock()
    }
}

/// The decoded payload of a compact JWS (unverified; the tests verify separately).
func jwtPayload(_ token: String) throws -> [String: JSONValue] {
    try CompactJWS(parsing: token).payloadObject()
}

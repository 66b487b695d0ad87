import Foundation
import HTTPServer
import JOSE
import Synchronization

/// A loopback stand-in for Apple's `/auth/token` and `/auth/revoke` (configure Herald's
/// `appleBaseURL` with ``baseURL``). Like Apple it checks every `client_secret`: an ES256 JWT
/// signed by the realm's `.p8` key with ``keyID`` as `kid`, `iss` the Team ID, `sub` the
/// request's `client_id`, `aud` `https://appleid.apple.com`, unexpired and at most 6 months
/// long. Codes work once. Every request is recorded (tokens included: it is a test double).
public final class FakeAppleAPIServer: Sendable {
    /// One request Herald made.
    public struct Call: Sendable, Equatable {
        public let path: String
        public let form: [String: String]
        /// Whether its `client_secret` passed every check above.
        public let secretValid: Bool
    }

    private struct State {
        var calls: [Call] = []
        /// Codes not yet exchanged → what their exchange returns.
        var codes: [String: (refreshToken: String, idToken: String)] = [:]
        var failWith: Int?
        /// While true, token requests wait (``holdTokenRequests()``); these are waiting.
        var holding = false
        var held: [CheckedContinuation<Void, Never>] = []
        var mostHeldAtOnce = 0
    }

    public let teamID: String
    public let keyID: String
    /// The `.p8` key a realm must be configured with (PEM, as Apple's portal gives it).
    public let privateKeyPEM: String
    private let publicKey: PublicKey
    private let state = Mutex(State())
    private let server = Mutex<HTTPServer?>(nil)
    private let port = Atomic<UInt16>(0)

    public var baseURL: String { "http://127.0.0.1:\(port.load(ordering: .acquiring))" }

    public init(teamID: String = "TEAM123456", keyID: String = "KEY7654321") throws {
        self.teamID = teamID
        self.keyID = keyID
        let key = try PrivateKey.generate(for: .es256)
        privateKeyPEM = try key.pkcs8PEM()
        publicKey = key.publicKey
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.threadCount = 1
        var router = Router()
        router.add("POST", "/auth/token") { [self] request in
            await waitWhileHolding()
            return token(request)
        }
        router.add("POST", "/auth/revoke") { [self] request in revoke(request) }
        let server = HTTPServer(configuration: configuration, router: router, errorResponder: { status, _ in
            HTTPResponse(status: status, body: Array("error \(status)".utf8))
        })
        try server.start()
        port.store(server.boundPort, ordering: .releasing)
        self.server.withLock { $0 = server }
    }

    /// Makes `code` exchangeable once, for `refreshToken` (and `idToken`, as for a web login).
    public func issue(code: String, refreshToken: String, idToken: String = "unused") {
        state.withLock { $0.codes[code] = (refreshToken, idToken) }
    }

    /// Answers every later request with `status` (nil: behave).
    public func fail(with status: Int?) {
        state.withLock { $0.failWith = status }
    }

    public var calls: [Call] { state.withLock { $0.calls } }

    /// Makes token requests wait, as a slow Apple would, until ``releaseTokenRequests()``.
    public func holdTokenRequests() {
        state.withLock { $0.holding = true }
    }

    /// Answers every waiting token request and stops holding.
    public func releaseTokenRequests() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holding = false
            defer { state.held = [] }
            return state.held
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Token requests waiting now, and the most that ever waited at once.
    public var heldTokenRequests: (now: Int, most: Int) { state.withLock { ($0.held.count, $0.mostHeldAtOnce) } }

    private func waitWhileHolding() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state -> Bool in
                guard state.holding else { return false }
                state.held.append(continuation)
                state.mostHeldAtOnce = max(state.mostHeldAtOnce, state.held.count)
                return true
            }
            if !wait { continuation.resume() }
        }
    }

    public func stop() async {
        guard let server = server.withLock({ $0.take() }) else { return }
        await server.shutdown()
    }

    private func token(_ request: HTTPRequest) -> HTTPResponse {
        let (form, valid, status) = record(request)
        if let status { return HTTPResponse(status: status, body: Array("{\"error\":\"server_error\"}".utf8)) }
        guard valid else { return Self.json(400, ["error": "invalid_client"]) }
        guard form["grant_type"] == "authorization_code", let code = form["code"],
              let grant = state.withLock({ $0.codes.removeValue(forKey: code) }) else {
            return Self.json(400, ["error": "invalid_grant"])
        }
        return Self.json(200, ["access_token": "apple-access", "token_type": "Bearer", "expires_in": 3600,
                               "refresh_token": .string(grant.refreshToken), "id_token": .string(grant.idToken)])
    }

    private func revoke(_ request: HTTPRequest) -> HTTPResponse {
        let (form, valid, status) = record(request)
        if let status { return HTTPResponse(status: status, body: Array("{\"error\":\"server_error\"}".utf8)) }
        guard valid, form["token"] != nil else { return Self.json(400, ["error": "invalid_client"]) }
        return HTTPResponse(status: 200)
    }

    private func record(_ request: HTTPRequest) -> (form: [String: String], valid: Bool, failWith: Int?) {
        let form = Self.decodeForm(request.body)
        let valid = secretIsValid(form["client_secret"], clientID: form["client_id"])
        let failWith = state.withLock { state -> Int? in
            state.calls.append(Call(path: request.path, form: form, secretValid: valid))
            return state.failWith
        }
        return (form, valid, failWith)
    }

    private func secretIsValid(_ secret: String?, clientID: String?) -> Bool {
        guard let secret, let clientID, let jws = try? CompactJWS(parsing: secret), jws.header.alg == "ES256",
              jws.header.kid == keyID, jws.verify(with: publicKey), let claims = try? jws.payloadObject(),
              let iat = claims["iat"]?.int64Value, let exp = claims["exp"]?.int64Value else { return false }
        let now = Int64(Date().timeIntervalSince1970)
        return claims["iss"]?.stringValue == teamID && claims["sub"]?.stringValue == clientID
            && claims["aud"]?.stringValue == "https://appleid.apple.com" && exp > now && iat <= now + 60
            && exp - iat <= 15_777_000
    }

    private static func json(_ status: Int, _ object: [String: JSONValue]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"],
                     body: JSONValue.object(object).serialized())
    }

    /// `application/x-www-form-urlencoded`, enough for what Herald sends.
    static func decodeForm(_ body: [UInt8]) -> [String: String] {
        var result: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            result[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return result
    }
}

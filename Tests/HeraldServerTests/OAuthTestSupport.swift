import Foundation
import Grants
import HTTPServer
import Realms
import Storage
import Testing
import JOSE
import Synchronization
@testable import HeraldServer

extension RunningHerald {
    /// An HTTP request (on the test client's own thread; see `send`).
    func request(_ method: String, _ path: String, headers: [(String, String)] = [],
                 body: [UInt8] = []) async throws -> TestHTTPClient.Response {
        try await send(method, path, headers: headers, body: body)
    }
}

/// A realm with a login page, a public and a confidential third-party client.
struct OAuthFixture {
    static let realm = "acme"
    static let loginURL = "https://login.acme.example/start"
    static let publicClient = "acme-spa"
    static let confidentialClient = "acme-backend"
    static let otherClient = "other-backend"
    static let redirect = "https://app.acme.example/callback"
    static let otherRedirect = "https://other.example/cb"
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk0123456789"
    static var challenge: String { PKCE.challenge(for: verifier) }

    let herald: RunningHerald
    /// The confidential client's secret.
    let secret: String
    /// The other (confidential) client's secret.
    let otherSecret: String
    /// The downstream state handle /authorize returned, by the backend's `state`.
    let handles = DownstreamHandles()

    /// Creates the realm and clients through the admin API.
    static func make(_ herald: RunningHerald, realmFields: [String: JSONValue] = ["loginUrl": .string(loginURL)]) async throws -> OAuthFixture {
        try await herald.createRealm(realm, realmFields)
        func client(_ id: String, confidential: Bool, redirects: [String]) async throws -> String? {
            let response = try await herald.admin("POST", "/api/admin/realms/\(realm)/clients", json: .object([
                "clientId": .string(id), "name": .string(id), "confidential": .bool(confidential),
                "redirectUris": .array(redirects.map(JSONValue.string)),
                "allowedScopes": ["openid", "profile", "email"],
            ]))
            guard response.status == 201 else { throw TestClientError("client \(id): \(response.status) \(response.text)") }
            return response.json["clientSecret"]?.stringValue
        }
        _ = try await client(publicClient, confidential: false, redirects: [redirect, "https://app.acme.example/q?x=1"])
        let secret = try await client(confidentialClient, confidential: true, redirects: [redirect])
        let otherSecret = try await client(otherClient, confidential: true, redirects: [otherRedirect])
        return OAuthFixture(herald: herald, secret: secret ?? "", otherSecret: otherSecret ?? "")
    }

    var issuer: String { herald.application.services.issuers.issuer(realmID: Self.realm) }

    /// The /authorize query for `client`, with overrides (nil value removes a parameter).
    static func authorizeQuery(client: String = publicClient, state: String = "st-123",
                               _ overrides: [String: String?] = [:]) -> String {
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", client), ("redirect_uri", redirect), ("state", state),
            ("code_challenge", challenge), ("code_challenge_method", "S256"), ("scope", "openid email profile"),
            ("nonce", "n-0S6_WzA2Mj"),
        ]
        for (name, value) in overrides {
            if let index = parameters.firstIndex(where: { $0.0 == name }) {
                if let value { parameters[index].1 = value } else { parameters.remove(at: index) }
            } else if let value {
                parameters.append((name, value))
            }
        }
        return parameters.map { "\($0.0)=\(RedirectURI.encode($0.1))" }.joined(separator: "&")
    }

    func authorize(client: String = publicClient, state: String = "st-123", _ overrides: [String: String?] = [:],
                   json: Bool = false) async throws -> TestHTTPClient.Response {
        let headers = json ? [("Accept", "application/json")] : []
        let response = try await herald.request("GET", "/api/oauth/\(Self.realm)/authorize?"
                                                + Self.authorizeQuery(client: client, state: state, overrides),
                                                headers: headers)
        let handle = json ? response.json["downstreamState"]?.stringValue
                          : response.header("Location").flatMap { queryParameters($0)["downstreamState"] }
        if let handle { handles.record(handle, forState: overrides["state"].flatMap { $0 } ?? state) }
        return response
    }

    /// The handle /authorize returned for `state`, or `state` itself when it returned none (so
    /// a test can present an unknown value).
    func downstreamState(for state: String) -> String { handles.handle(forState: state) ?? state }

    /// The branch B step alone, in a READ COMMITTED write transaction of its own (native login
    /// runs it inside the login's).
    /// `handle` overrides the handle remembered for `state` (two clients may hold one state).
    func complete(client: String = publicClient, state: String = "st-123", handle: String? = nil, accountID: String,
                  authTime: Int64 = 1_800_000_000) async throws -> String {
        let context = herald.application.services
        let grants = DownstreamAuthorizations(database: context.database, now: context.now)
        let issuer = self.issuer
        let handle = handle ?? downstreamState(for: state)
        return try await context.database.write(isolation: .readCommitted) { db in
            // As stored now, as the login passes it (checked by the realm's stamp).
            guard let stored = try ClientAppStore.load(db, realmID: Self.realm, clientID: client) else {
                throw GrantsError(.invalidDownstreamState, "no such client")
            }
            return try grants.completeDownstream(in: db, realmID: Self.realm, issuer: issuer, client: stored,
                                                 downstreamState: handle, accountID: accountID, authTime: authTime).redirectURI
        }
    }
}

/// The downstream state handles a fixture's /authorize calls returned (the latest per state).
final class DownstreamHandles: Sendable {
    private let byState = Mutex<[String: String]>([:])

    func record(_ handle: String, forState state: String) { byState.withLock { $0[state] = handle } }

    func handle(forState state: String) -> String? { byState.withLock { $0[state] } }
}

/// The query parameters of a URL (form-decoded), by name.
func queryParameters(_ url: String) -> [String: String] {
    guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return [:] }
    let withoutFragment = query.split(separator: "#", maxSplits: 1).first.map(String.init) ?? ""
    var result: [String: String] = [:]
    for pair in FormDecoding.pairs(Array(withoutFragment.utf8)) ?? [] { result[pair.name] = pair.value }
    return result
}

extension OAuthFixture {
    /// An active account with a verified email and a name.
    func account(email: String = "jane@example.com") async throws -> String {
        try await herald.accounts.create(realmID: Self.realm, NewAccount(
            email: email, emailVerified: true, name: PersonName(givenName: "Jane", familyName: "Doe"))).id
    }

    /// authorize + branch B: a fresh code for `client`.
    func code(client: String = publicClient, state: String = "st-\(UUID().uuidString)", accountID: String,
              authTime: Int64 = 1_800_000_000, _ overrides: [String: String?] = [:]) async throws -> String {
        let response = try await authorize(client: client, state: state, overrides, json: true)
        guard response.status == 200 else { throw TestClientError("authorize: \(response.status) \(response.text)") }
        let redirect = try await complete(client: client, state: state, accountID: accountID, authTime: authTime)
        guard let code = queryParameters(redirect)["code"] else { throw TestClientError("no code") }
        return code
    }

    /// POSTs a form to an OAuth endpoint, optionally with HTTP Basic client authentication.
    func post(_ endpoint: String, _ form: [(String, String)], basic: (String, String)? = nil,
              bearer: String? = nil) async throws -> TestHTTPClient.Response {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let basic {
            let pair = RedirectURI.encode(basic.0) + ":" + RedirectURI.encode(basic.1)
            headers.append(("Authorization", "Basic " + Data(pair.utf8).base64EncodedString()))
        }
        if let bearer { headers.append(("Authorization", "Bearer " + bearer)) }
        let body = form.map { RedirectURI.encode($0.0) + "=" + RedirectURI.encode($0.1) }.joined(separator: "&")
        return try await herald.request("POST", "/api/oauth/\(Self.realm)/\(endpoint)", headers: headers, body: Array(body.utf8))
    }

    /// The authorization_code grant for the public client.
    func exchange(_ code: String, client: String = publicClient, verifier: String = verifier,
                  redirect: String = redirect, basic: (String, String)? = nil) async throws -> TestHTTPClient.Response {
        var form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
                    ("code_verifier", verifier)]
        if basic == nil { form.append(("client_id", client)) }
        return try await post("token", form, basic: basic)
    }

    /// GET userinfo with a Bearer token.
    func userinfo(_ accessToken: String) async throws -> TestHTTPClient.Response {
        try await herald.request("GET", "/api/oauth/\(Self.realm)/userinfo", headers: [("Authorization", "Bearer \(accessToken)")])
    }

    /// Verifies a JWT against the realm's published JWKS and returns its claims.
    func verifiedClaims(_ token: String) async throws -> [String: JSONValue] {
        let jwks = try await herald.request("GET", "/api/oauth/\(Self.realm)/jwks.json")
        let set = try JWKSet.parse(jwks.body)
        let jws = try CompactJWS(parsing: token)
        let key = try #require(set.keys[jws.header.kid ?? ""])
        let algorithm = try #require(JWSAlgorithm(rawValue: jws.header.alg))
        guard key.verify(signature: jws.signature, message: jws.signingInput, algorithm: algorithm) else {
            throw TestClientError("signature does not verify")
        }
        return try jws.payloadObject()
    }
}

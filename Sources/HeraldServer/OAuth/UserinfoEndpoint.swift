import Grants
import HTTPServer
import JOSE
import Realms
import TokenIssuer

/// `GET|POST /api/oauth/:realm/userinfo` (OIDC Core §5.3): the account's claims by the access
/// token's scope — `sub` always, `email`/`email_verified` with `email`, `name` with `profile`.
/// A bad, expired or revoked token answers 401 with a Bearer `invalid_token` challenge.
struct UserinfoEndpoint: Sendable {
    let context: HeraldContext
    let realms: RealmStore
    let accounts: AccountStore

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let realm = try await realms.enabledRealm(request.parameter("realm")) else { throw APIError.notFound("Realm") }
        guard let token = Self.bearerToken(request) else {
            return Self.challenge(realmID: realm.id, error: nil, "a Bearer access token is required")
        }
        guard case .valid(let claims) = await context.tokens.validateAccessToken(token, realmID: realm.id) else {
            return Self.challenge(realmID: realm.id, error: "invalid_token", "the access token is invalid, expired or revoked")
        }
        guard claims.scope.contains("openid") else {
            var response = HTTPResponse.json(status: 403, JSONValue.object([
                "error": "insufficient_scope", "error_description": "userinfo requires the openid scope"]), noStore: true)
            response.headers.set("WWW-Authenticate", #"Bearer realm="\#(realm.id)", error="insufficient_scope", scope="openid""#)
            return response
        }
        guard let account = try await accounts.account(realmID: realm.id, id: claims.sub), account.status == .active else {
            return Self.challenge(realmID: realm.id, error: "invalid_token", "the access token is invalid, expired or revoked")
        }
        var object: [String: JSONValue] = ["sub": .string(account.id)]
        if claims.scope.contains("email") {
            object["email"] = .string(account.email)
            object["email_verified"] = .bool(account.emailVerified)
        }
        if claims.scope.contains("profile"), let name = account.name.formatted {
            object["name"] = .string(name)
            if let given = account.name.givenName { object["given_name"] = .string(given) }
            if let family = account.name.familyName { object["family_name"] = .string(family) }
        }
        return HTTPResponse.json(JSONValue.object(object), noStore: true)
    }

    /// The token of `Authorization: Bearer …` (RFC 6750 §2.1).
    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let header = request.headers["Authorization"] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// 401 with `WWW-Authenticate: Bearer realm=…[, error=…]` (RFC 6750 §3).
    static func challenge(realmID: String, error: String?, _ description: String) -> HTTPResponse {
        var response = HTTPResponse.json(status: 401, JSONValue.object([
            "error": .string(error ?? "invalid_request"), "error_description": .string(description)]), noStore: true)
        var challenge = #"Bearer realm="\#(realmID)""#
        if let error { challenge += #", error="\#(error)""# }
        response.headers.set("WWW-Authenticate", challenge)
        return response
    }
}

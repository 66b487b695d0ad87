import Grants
import HTTPServer
import JOSE
import Realms
import TokenIssuer

/// `GET|POST /api/oauth/:realm/userinfo` (OIDC Core §5.3): the account's claims by the access
/// token's scope — `sub` always, `email`/`email_verified` with `email`, `name` (and its parts)
/// and `picture` with `profile`, each when known.
/// The token comes in `Authorization: Bearer` or, on POST, as `access_token` in a form body
/// (RFC 6750 §2.1, §2.2; OIDC Core §5.3.1); both at once is 400 `invalid_request`.
/// A bad, expired or revoked token answers 401 with a Bearer `invalid_token` challenge.
struct UserinfoEndpoint: Sendable {
    let realms: RealmStore
    let accounts: AccountStore
    let accessTokens: AccessTokenVerifier

    func handle(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let realm = try await realms.enabledRealm(request.parameter("realm")) else { throw APIError.notFound("Realm") }
        let token: String
        switch Self.presentedToken(request) {
        case .token(let presented):
            token = presented
        case .absent:
            return Self.challenge(realmID: realm.id, error: nil, "a Bearer access token is required")
        case .invalidRequest(let description):
            return Self.challenge(realmID: realm.id, status: 400, error: "invalid_request", description)
        }
        guard case .valid(let claims) = try await accessTokens.validate(token, realmID: realm.id) else {
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
        if claims.scope.contains("profile"), let picture = account.pictureURL { object["picture"] = .string(picture) }
        return HTTPResponse.json(JSONValue.object(object), noStore: true)
    }

    /// What the request presents as its access token.
    enum PresentedToken: Equatable {
        case token(String)
        case absent
        /// A request RFC 6750 §3.1 calls `invalid_request`; the description names no value.
        case invalidRequest(String)
    }

    /// The access token from the Authorization header or, on POST, the form-encoded body. A
    /// request using both methods is refused (RFC 6750 §2): which one to believe is ambiguous.
    static func presentedToken(_ request: HTTPRequest) -> PresentedToken {
        let header = BearerAuthorization.token(in: request)
        let usesHeader = header != nil || request.headers["Authorization"].map(hasBearerScheme) == true
        guard request.method == "POST", isFormEncoded(request) else {
            return header.map(PresentedToken.token) ?? .absent
        }
        let form: OAuthRequestBody
        do {
            form = try OAuthRequestBody(request)
        } catch {
            return .invalidRequest(error.message)
        }
        guard form.parameters["access_token"] != nil else { return header.map(PresentedToken.token) ?? .absent }
        if usesHeader {
            return .invalidRequest("the access token must be sent one way only: the Authorization header or the form body")
        }
        return form["access_token"].map(PresentedToken.token) ?? .absent
    }

    /// RFC 6750 §2.2: the body method applies only to `application/x-www-form-urlencoded`.
    private static func isFormEncoded(_ request: HTTPRequest) -> Bool {
        request.mediaType == "application/x-www-form-urlencoded"
    }

    private static func hasBearerScheme(_ header: String) -> Bool {
        header.split(separator: " ", maxSplits: 1).first?.lowercased() == "bearer"
    }

    /// 401 (or `status`) with `WWW-Authenticate: Bearer realm=…[, error=…]` (RFC 6750 §3).
    static func challenge(realmID: String, status: Int = 401, error: String?, _ description: String) -> HTTPResponse {
        var response = HTTPResponse.json(status: status, JSONValue.object([
            "error": .string(error ?? "invalid_request"), "error_description": .string(description)]), noStore: true)
        var challenge = #"Bearer realm="\#(realmID)""#
        if let error { challenge += #", error="\#(error)""# }
        response.headers.set("WWW-Authenticate", challenge)
        return response
    }
}

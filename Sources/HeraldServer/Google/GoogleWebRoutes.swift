import Foundation
import HTTPServer
import HeraldGoogle
import JOSE
import Login
import ProviderKeys

/// Sign in with Google for browsers and WebViews:
/// - `GET /api/oauth/:realm/google/login?clientId=…[&downstreamState=…][&returnTo=…]` → the
///   page with Google's button (`GoogleSignInPage`), binding the sign-in to the browser with
///   `WebSignInCookie.google`; limited per client IP and client like `/authorize`;
/// - `POST /api/oauth/:realm/google/callback`, the button's `login_uri`: Google's form with
///   `credential` (the ID token) and `g_csrf_token`, whose double-submit cookie must match →
///   the result page (`LoginResultPage`), as Apple's web flow ends.
///
/// The handlers are static and take the group as `context`: what it holds is all they use.
struct GoogleWebRoutes: RouteGroup {
    let googleWeb: GoogleWebLogin
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    /// The one log line and metric per attempt (door `web`, provider `google`).
    let recorder: LoginRecorder
    let logger: Logger
    /// Google's script, loaded by the page (`HERALD_GOOGLE_GSI_SCRIPT_URL`).
    let scriptURL: URL
    /// Herald's public base URL: the button's `login_uri` must be absolute.
    let publicURL: String

    /// Google's name for the CSRF token, as both a form field and a cookie.
    static let csrfTokenName = "g_csrf_token"
    /// Longest CSRF token read (Google's are short random strings).
    static let maxCSRFTokenBytes = 256

    func register(in router: inout Router, endpoint: Endpoint) {
        let context = self
        router.add("GET", "/api/oauth/:realm/google/login", endpoint.handler { request in
            try await Self.start(request, context: context)
        })
        router.add("POST", "/api/oauth/:realm/google/callback", endpoint.handler { request in
            try await Self.callback(request, context: context)
        })
    }

    static func start(_ request: HTTPRequest, context: GoogleWebRoutes) async throws -> HTTPResponse {
        let start = try WebSignInStart(query: request)
        try await context.requestLimiter.admit(start, endpoint: .googleWebLogin, request: request,
                                               clientAddresses: context.clientAddresses, logger: context.logger)
        let binding = WebSignInCookie.google.binding(in: request) ?? WebSignInCookie.newBinding()
        let button: GoogleWebLogin.Button
        do {
            button = try await context.googleWeb.start(start, browserBinding: binding)
        } catch let refusal as WebSignInStart.Refusal {
            throw APIError(refusal, provider: .google, setup: "enabled")
        }
        var response = GoogleSignInPage(scriptURL: context.scriptURL,
                                        loginURI: "\(context.publicURL)/api/oauth/\(start.realmID)/google/callback",
                                        button: button).response
        response.headers.set("Set-Cookie", WebSignInCookie.google.setCookie(binding,
                                                                           maxAgeSeconds: WebSignInStates.lifetimeSeconds))
        return response
    }

    static func callback(_ request: HTTPRequest, context: GoogleWebRoutes) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        guard request.mediaType == "application/x-www-form-urlencoded", let pairs = FormDecoding.pairs(request.body) else {
            return WebSignInAnswer.badRequest("Google's answer must be a form")
        }
        var fields: [String: String] = [:]
        let limits = ["credential": IdentityTokenBounds.maximumTokenBytes, csrfTokenName: maxCSRFTokenBytes]
        for (name, value) in pairs {
            guard let limit = limits[name] else { continue }
            guard fields[name] == nil, value.utf8.count <= limit else {
                return WebSignInAnswer.badRequest("\(name) is repeated or too long")
            }
            fields[name] = value
        }
        // Google's double-submit check: the token in the form must equal the cookie Google's
        // script set on this origin, which another site can neither read nor set.
        guard let formToken = fields[csrfTokenName], !formToken.isEmpty,
              WebSignInCookie.values(named: csrfTokenName, in: request).contains(where: {
                  ConstantTime.equals(Array($0.utf8), Array(formToken.utf8))
              }) else {
            return WebSignInAnswer.page(400, ["status": "error", "code": "invalid_csrf_token",
                                              "message": "Google's CSRF token is missing or does not match its cookie; start again"],
                                        title: "Sign-in failed")
        }
        guard let credential = fields["credential"], !credential.isEmpty else {
            return WebSignInAnswer.badRequest("Google sent no credential")
        }
        let outcome = try await context.googleWeb.complete(realmID: realmID, credential: credential,
                                                           browserBinding: WebSignInCookie.google.binding(in: request),
                                                           clientIP: context.clientAddresses.clientAddress(of: request))
        switch outcome {
        case .invalidState:
            return WebSignInAnswer.invalidState
        case .noBrowserBinding:
            return WebSignInAnswer.noBrowserBinding
        case .returnToWithdrawn:
            return WebSignInAnswer.returnToWithdrawn
        case .loginFailed(let error, let returnTo):
            context.recorder.record(.failure(error), realmID: realmID, clientID: "", request: request)
            return WebSignInAnswer.loginFailed(error, returnTo: returnTo, provider: .google)
        case .loggedIn(let login, let returnTo):
            context.recorder.record(.success(login), realmID: realmID, clientID: "", request: request)
            return try WebSignInAnswer.loggedIn(login, returnTo: returnTo)
        }
    }
}

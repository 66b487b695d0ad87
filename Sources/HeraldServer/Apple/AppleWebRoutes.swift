import Foundation
import Grants
import HTTPServer
import HeraldApple
import JOSE
import Login
import Realms

/// Sign in with Apple for browsers and WebViews:
/// - `GET /api/oauth/:realm/apple/login?clientId=…[&downstreamState=…][&returnTo=…]` → 302 to
///   Apple's authorize page (`response_mode=form_post`), binding the state to the browser with
///   `WebSignInCookie.apple`; limited per client IP and client like `/authorize`;
/// - `POST /api/oauth/:realm/apple/callback` (form_post) → the result page
///   (`LoginResultPage`). Apple's `error=` (the user cancelled) is a normal ending, 200,
///   by POST or GET; a code or ID token is taken by POST only, as Apple sends them, so a link
///   cannot deliver one.
///
/// The handlers are static and take the group as `context`: what it holds is all they use.
struct AppleWebRoutes: RouteGroup {
    let appleWeb: AppleWebLogin
    let appleRefusals: AppleExchangeRefusals
    let requestLimiter: RequestRateLimiter
    let clientAddresses: ClientAddressResolver
    /// What the login log line and metric need (shared with native login).
    /// The one log line and metric per attempt (door `web`).
    let recorder: LoginRecorder
    let metrics: HeraldMetrics
    let logger: Logger

    /// Longest value read from Apple's answer (an ID token is at most 16 KiB).
    static let maxParameterBytes = AppleIdentityVerifier.maximumTokenBytes

    func register(in router: inout Router, endpoint: Endpoint) {
        let context = self
        router.add("GET", "/api/oauth/:realm/apple/login", endpoint.handler { request in
            try await Self.start(request, context: context)
        })
        for method in ["GET", "POST"] {
            router.add(method, "/api/oauth/:realm/apple/callback", endpoint.handler { request in
                try await Self.callback(request, context: context)
            })
        }
    }

    static func start(_ request: HTTPRequest, context: AppleWebRoutes) async throws -> HTTPResponse {
        let start = try WebSignInStart(query: request)
        try await context.requestLimiter.admit(start, endpoint: .appleWebLogin, request: request,
                                               clientAddresses: context.clientAddresses, logger: context.logger)
        let binding = WebSignInCookie.apple.binding(in: request) ?? WebSignInCookie.newBinding()
        do {
            let url = try await context.appleWeb.start(start, browserBinding: binding)
            return HTTPResponse(status: 302, headers: [
                "Location": url.absoluteString, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                "Set-Cookie": WebSignInCookie.apple.setCookie(binding, maxAgeSeconds: WebSignInStates.lifetimeSeconds),
            ])
        } catch let refusal as WebSignInStart.Refusal {
            throw APIError(refusal, provider: .apple, setup: "enabled, with a Return URL")
        }
    }

    static func callback(_ request: HTTPRequest, context: AppleWebRoutes) async throws -> HTTPResponse {
        let realmID = request.parameter("realm")
        let pairs: [(name: String, value: String)]
        if request.method == "POST" {
            guard request.mediaType == "application/x-www-form-urlencoded", let decoded = FormDecoding.pairs(request.body) else {
                return page(400, ["status": "error", "code": "bad_request",
                                  "message": "Apple's answer must be a form (response_mode=form_post)"], title: "Sign-in failed")
            }
            pairs = decoded
        } else {
            pairs = request.queryItems()
        }
        var parameters: [String: String] = [:]
        for (name, value) in pairs where ["state", "code", "id_token", "user", "error"].contains(name) {
            guard parameters[name] == nil, value.utf8.count <= maxParameterBytes else {
                return page(400, ["status": "error", "code": "bad_request", "message": .string("\(name) is repeated or too long")],
                            title: "Sign-in failed")
            }
            parameters[name] = value
        }
        // Apple posts credentials (form_post) and uses a query only for errors; a GET carrying
        // a code is someone else's link, refused without looking at its state.
        if request.method != "POST", parameters["code"] != nil || parameters["id_token"] != nil {
            return page(400, ["status": "error", "code": "bad_request",
                              "message": "Apple's credentials are accepted by form_post only"], title: "Sign-in failed")
        }
        let outcome = try await context.appleWeb.complete(realmID: realmID, parameters: parameters,
                                                          browserBinding: WebSignInCookie.apple.binding(in: request),
                                                          clientIP: context.clientAddresses.clientAddress(of: request))
        switch outcome {
        case .invalidState:
            return WebSignInAnswer.invalidState
        case .noBrowserBinding:
            return WebSignInAnswer.noBrowserBinding
        case .returnToWithdrawn:
            return WebSignInAnswer.returnToWithdrawn
        case .appleError(let error, let returnTo):
            return page(200, ["status": "cancelled", "error": .string(error)], link: returnTo, title: "Sign-in cancelled")
        case .missingCredentials(let returnTo):
            return page(400, ["status": "error", "code": "missing_credentials",
                              "message": "Apple sent neither an authorization code nor an ID token"],
                        link: returnTo, title: "Sign-in failed")
        case .exchangeFailed(let failure, let returnTo):
            context.metrics.recordAppleCall(operation: "token_exchange", outcome: failure.rawValue)
            context.logger.warning("apple_token_exchange_failed", ["realm": .string(realmID), "reason": .string(failure.rawValue),
                                                                   "flow": "web"])
            if failure.isRefusal {
                // Apple answered and said no: trying again cannot fix a wrong Key ID, Team ID or
                // key, so the page does not blame Apple's availability, and the operator gets an
                // event naming Apple's error.
                await context.appleRefusals.record(failure, realmID: realmID, clientID: nil)
                return page(400, ["status": "error", "code": "apple_refused",
                                  "message": "Apple did not accept this sign-in",
                                  "details": ["reason": .string(failure.rawValue)]],
                            link: returnTo, title: "Sign-in failed")
            }
            await context.appleRefusals.record(failure, realmID: realmID, clientID: nil)
            let status = failure == .notConfigured ? 404 : 503
            return page(status, ["status": "error", "code": status == 404 ? "provider_not_configured" : "apple_unavailable",
                                 "message": "Apple's token endpoint could not be used; try again"],
                        link: returnTo, title: "Sign-in failed")
        case .loginFailed(let error, let returnTo):
            context.recorder.record(.failure(error), realmID: realmID, clientID: "", request: request)
            return WebSignInAnswer.loginFailed(error, returnTo: returnTo, provider: .apple)
        case .loggedIn(let login, let returnTo):
            // Only a code is exchanged; a login on the posted ID token alone made no call.
            if parameters["code"]?.isEmpty == false {
                context.metrics.recordAppleCall(operation: "token_exchange", outcome: "success")
                context.appleRefusals.recordSuccess(realmID: realmID)
            }
            context.recorder.record(.success(login), realmID: realmID, clientID: "", request: request)
            return try WebSignInAnswer.loggedIn(login, returnTo: returnTo)
        }
    }

    static func page(_ status: Int, _ result: [String: JSONValue], link: String? = nil, title: String) -> HTTPResponse {
        WebSignInAnswer.page(status, result, link: link, title: title)
    }
}

import Foundation
import HTTPServer
import HeraldApple
import HeraldGoogle
import JOSE
import Login
import Realms
import TokenIssuer

/// The native door, one route per provider: `POST /api/oauth/:realm/apple/native-login` and
/// `POST /api/oauth/:realm/google/native-login`. Each decodes its body, runs the login pipeline
/// (`IdentityTokenLogin` with the provider's verifier), answers branch A or B, and records each
/// attempt (`LoginRecorder`, door `native`). The handlers are static and take the group as
/// `context`: what it holds is all they use.
struct NativeLoginRoutes: RouteGroup {
    let appleLogin: IdentityTokenLogin<AppleIdentityVerifier>
    let googleLogin: IdentityTokenLogin<GoogleIdentityVerifier>
    /// Where a login's Apple authorization code is handed over (queued for exchange).
    let appleTokens: AppleTokenVault
    let clientAddresses: ClientAddressResolver
    let metrics: HeraldMetrics
    /// The realm overview's sign-in buckets.
    let loginCounts: LoginCounts
    let logger: Logger

    /// Longest identity token read from the body; longer than the 16 KiB limit so the limit
    /// itself answers (and counts as a failed attempt).
    static let maxReadTokenBytes = 65_536

    func register(in router: inout Router, endpoint: Endpoint) {
        let context = self
        router.add("POST", "/api/oauth/:realm/apple/native-login", endpoint.handler { request in
            try await Self.apple(request, context: context)
        })
        router.add("POST", "/api/oauth/:realm/google/native-login", endpoint.handler { request in
            try await Self.google(request, context: context)
        })
    }

    /// Apple's body: `identityToken`, and what only Apple sends: the `authorizationCode` (queued
    /// for exchange after a success) and the `fullName` it gives only on the first sign-in.
    static func apple(_ request: HTTPRequest, context: NativeLoginRoutes) async throws -> HTTPResponse {
        let recorder = context.recorder(.apple)
        var appleCode: String?
        let outcome = try await login(request, provider: .apple, with: context.appleLogin, recorder: recorder,
                                      context: context) { body in
            appleCode = body.string("authorizationCode", maxLength: 4096, allowEmpty: true)
            return fullName(&body)
        }
        if case .success(let result) = outcome, let appleCode, !appleCode.isEmpty {
            // Apple issued the code to the app the verified token is for: the audience the
            // verifier matched. It is only queued here, in one short write; `AppleTokenWork`
            // exchanges it after the answer.
            if case .failure(let failure) = await context.appleTokens.keep(
                .authorizationCode(appleCode), realmID: request.parameter("realm"), accountID: result.accountID,
                clientID: result.audience) {
                // The login stands; the account keeps the Apple token it had, if any.
                context.logger.warning("apple_token_exchange_not_queued", ["realm": .string(request.parameter("realm")),
                                                                           "reason": .string(failure.rawValue)])
            }
        }
        return try answer(outcome, provider: .apple)
    }

    /// Google's body: `idToken` only; the name comes from the token (`name`, `given_name`,
    /// `family_name`), as Google sends it on every sign-in.
    static func google(_ request: HTTPRequest, context: NativeLoginRoutes) async throws -> HTTPResponse {
        let outcome = try await login(request, provider: .google, with: context.googleLogin,
                                      recorder: context.recorder(.google), context: context) { _ in PersonName() }
        return try answer(outcome, provider: .google)
    }

    /// Reads the fields every provider's body has (`provider.tokenField`, `clientId`, `nonce`,
    /// `downstreamState`) and the provider's own (`readName`), runs the pipeline and records the
    /// attempt. An unreadable body is recorded and thrown.
    private static func login<Verifier>(
        _ request: HTTPRequest, provider: LoginProvider, with pipeline: IdentityTokenLogin<Verifier>,
        recorder: LoginRecorder, context: NativeLoginRoutes, readName: (inout JSONRequestBody) -> PersonName
    ) async throws -> Result<LoginResult, LoginError> {
        let realmID = request.parameter("realm")
        let loginRequest: LoginRequest
        do {
            var body = try JSONRequestBody(request)
            let token = body.string(provider.tokenField, required: true, maxLength: maxReadTokenBytes)
            let clientID = body.string("clientId", required: true, maxLength: 128)
            let nonce = body.string("nonce", maxLength: 1024)
            let state = body.string("downstreamState", maxLength: 1024)
            let name = readName(&body)
            try body.validate()
            guard let token, let clientID else { throw APIError.badRequest("Invalid request") }
            loginRequest = LoginRequest(realmID: realmID, identityToken: token, clientID: clientID, rawNonce: nonce,
                                        downstreamState: state, fullName: name,
                                        clientIP: context.clientAddresses.clientAddress(of: request))
        } catch {
            // An unreadable request is an attempt too: one log line, no client (it was never checked).
            recorder.record(.failure(LoginError(.badRequest)), realmID: realmID, clientID: "", request: request)
            throw error
        }
        let outcome: Result<LoginResult, LoginError>
        do {
            outcome = .success(try await pipeline.login(loginRequest))
        } catch {
            outcome = .failure(error)
        }
        recorder.record(outcome, realmID: realmID, clientID: loginRequest.clientID, request: request)
        return outcome
    }

    /// Branch A's tokens or branch B's redirect, else the failure in the error envelope.
    private static func answer(_ outcome: Result<LoginResult, LoginError>, provider: LoginProvider) throws -> HTTPResponse {
        switch outcome {
        case .success(let result):
            switch result.branch {
            case .session(let tokens):
                return .json(body: try SessionTokensResponse(message: "Login successful", tokens: tokens,
                                                             isNewUser: result.isNewUser).body, noStore: true)
            case .downstream(let redirectURI):
                return .json(["redirectUri": redirectURI], noStore: true)
            }
        case .failure(let error):
            throw APIError(error, provider: provider)
        }
    }

    /// The one log line and metric per attempt of `provider` (door `native`).
    private func recorder(_ provider: LoginProvider) -> LoginRecorder {
        LoginRecorder(door: .native, provider: provider.name, metrics: metrics, counts: loginCounts, logger: logger)
    }

    /// `fullName`: a string (split by `PersonName(fullName:)`), or
    /// `{givenName, familyName, middleName, nickname}`.
    static func fullName(_ body: inout JSONRequestBody) -> PersonName {
        func part(_ value: JSONValue?, _ field: String) -> String? {
            switch value {
            case nil, .null?: return nil
            case .string(let text)? where text.count <= InputRules.maxNameLength:
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                return trimmed.isEmpty ? nil : trimmed
            default:
                body.problem(field, "must be a string of at most \(InputRules.maxNameLength) characters")
                return nil
            }
        }
        switch body.object["fullName"] {
        case nil, .null?:
            return PersonName()
        case .string?:
            // Split into given and family name, so the parts are known as with the object form.
            return part(body.object["fullName"], "fullName").map(PersonName.init(fullName:)) ?? PersonName()
        case .object(let members)?:
            let given = part(members["givenName"], "fullName.givenName")
            let middle = part(members["middleName"], "fullName.middleName")
            let family = part(members["familyName"], "fullName.familyName")
            let nickname = part(members["nickname"], "fullName.nickname")
            let givenWithMiddle = [given, middle].compactMap { $0 }.joined(separator: " ")
            return PersonName(givenName: givenWithMiddle.isEmpty ? nil : givenWithMiddle, familyName: family,
                              displayName: given == nil && family == nil ? nickname : nil)
        default:
            body.problem("fullName", "must be a string or an object")
            return PersonName()
        }
    }
}

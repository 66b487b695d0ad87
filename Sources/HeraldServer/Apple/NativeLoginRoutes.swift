import Foundation
import HTTPServer
import HeraldApple
import JOSE
import Login
import Realms
import TokenIssuer

/// `POST /api/oauth/:realm/apple/native-login`: decodes the request, runs the login pipeline
/// (`IdentityTokenLogin` with Apple's verifier), answers branch A or B, and records each attempt
/// (`LoginRecorder`, door `native`). The handlers are static and take the group as `context`:
/// what it holds is all they use.
struct NativeLoginRoutes: RouteGroup {
    let nativeLogin: IdentityTokenLogin<AppleIdentityVerifier>
    /// Where a login's Apple authorization code is handed over (queued for exchange).
    let appleTokens: AppleTokenVault
    let clientAddresses: ClientAddressResolver
    let metrics: HeraldMetrics
    let logger: Logger

    /// The one log line and metric per attempt (door `native`).
    let recorder: LoginRecorder

    /// Longest identity token read from the body; longer than the 16 KiB limit so the limit
    /// itself answers (and counts as a failed attempt).
    static let maxReadTokenBytes = 65_536

    func register(in router: inout Router, endpoint: Endpoint) {
        let context = self
        router.add("POST", "/api/oauth/:realm/apple/native-login", endpoint.handler { request in
            try await Self.handle(request, context: context)
        })
    }

    static func handle(_ request: HTTPRequest, context: NativeLoginRoutes) async throws -> HTTPResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        let realmID = request.parameter("realm")
        let token: String
        let clientID: String
        let nonce: String?
        let state: String?
        let name: PersonName
        let appleCode: String?
        do {
            var body = try JSONRequestBody(request)
            let readToken = body.string("identityToken", required: true, maxLength: maxReadTokenBytes)
            let readClient = body.string("clientId", required: true, maxLength: 128)
            nonce = body.string("nonce", maxLength: 1024)
            state = body.string("downstreamState", maxLength: 1024)
            appleCode = body.string("authorizationCode", maxLength: 4096, allowEmpty: true)
            name = fullName(&body)
            try body.validate()
            guard let readToken, let readClient else { throw APIError.badRequest("Invalid request") }
            token = readToken
            clientID = readClient
        } catch {
            // An unreadable request is an attempt too: one log line, no client (it was never checked).
            context.recorder.record(.failure(LoginError(.badRequest)), realmID: realmID, clientID: "",
                                    requestID: request.requestID, started: started)
            throw error
        }

        let loginRequest = LoginRequest(realmID: realmID, identityToken: token, clientID: clientID, rawNonce: nonce,
                                        downstreamState: state, fullName: name,
                                        clientIP: context.clientAddresses.clientAddress(of: request))
        let outcome: Result<LoginResult, LoginError>
        do {
            outcome = .success(try await context.nativeLogin.login(loginRequest))
        } catch {
            outcome = .failure(error)
        }
        context.recorder.record(outcome, realmID: realmID, clientID: clientID, requestID: request.requestID,
                                started: started)
        if case .success(let result) = outcome, let appleCode, !appleCode.isEmpty {
            // Apple issued the code to the app the verified token is for: the audience the
            // verifier matched. It is only queued here, in one short write; `AppleTokenWork`
            // exchanges it after the answer.
            if case .failure(let failure) = await context.appleTokens.keep(
                .authorizationCode(appleCode), realmID: realmID, accountID: result.accountID, clientID: result.audience) {
                // The login stands; the account keeps the Apple token it had, if any.
                context.logger.warning("apple_token_exchange_not_queued", ["realm": .string(realmID),
                                                                           "reason": .string(failure.rawValue)])
            }
        }
        switch outcome {
        case .success(let result):
            switch result.branch {
            case .session(let tokens):
                return .json(try SessionTokensResponse(message: "Login successful", tokens: tokens,
                                                       isNewUser: result.isNewUser).json, noStore: true)
            case .downstream(let redirectURI):
                return .json(["redirectUri": redirectURI], noStore: true)
            }
        case .failure(let error):
            throw APIError(error)
        }
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

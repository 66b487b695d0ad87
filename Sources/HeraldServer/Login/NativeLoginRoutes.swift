import Foundation
import HTTPServer
import HeraldApple
import JOSE
import Realms
import TokenIssuer

/// `POST /api/oauth/:realm/apple/native-login`: decodes the request, runs `AppleNativeLogin`,
/// answers branch A or B, and writes one log line and one metric per attempt — never the
/// token, nonce or email.
struct NativeLoginRoutes: RouteGroup {
    let context: HeraldContext

    /// Longest identity token read from the body; longer than the 16 KiB limit so the limit
    /// itself answers (and counts as a failed attempt).
    static let maxReadTokenBytes = 65_536

    func register(in router: inout Router, endpoint: Endpoint) {
        let context = self.context
        router.add("POST", "/api/oauth/:realm/apple/native-login", endpoint.handler { request in
            try await Self.handle(request, context: context)
        })
    }

    static func handle(_ request: HTTPRequest, context: HeraldContext) async throws -> HTTPResponse {
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
            record(.failure(NativeLoginError(.badRequest)), realmID: realmID, clientID: "", request: request,
                   context: context, started: started)
            throw error
        }

        let loginRequest = NativeLoginRequest(realmID: realmID, identityToken: token, clientID: clientID, rawNonce: nonce,
                                              downstreamState: state, fullName: name,
                                              clientIP: context.clientAddresses.clientAddress(of: request))
        let outcome: Result<NativeLoginResult, NativeLoginError>
        do {
            outcome = .success(try await context.nativeLogin.login(loginRequest))
        } catch {
            outcome = .failure(error)
        }
        record(outcome, realmID: realmID, clientID: clientID, request: request, context: context, started: started)
        if case .success(let result) = outcome, let appleCode, !appleCode.isEmpty,
           let audience = try? CompactJWS(parsing: token, maxLength: AppleIdentityVerifier.maximumTokenBytes)
               .payloadObject()["aud"]?.stringValue {
            // Apple issued the code to the app the verified token is for (its `aud`).
            AppleTokenTasks.keepRefreshToken(code: appleCode, realmID: realmID, accountID: result.accountID,
                                             clientID: audience, context: context)
        }
        switch outcome {
        case .success(.session(let tokens, let isNewUser)):
            return .json(try SessionTokensResponse(message: "Login successful", tokens: tokens, isNewUser: isNewUser).json,
                         noStore: true)
        case .success(.downstream(let redirectURI, _, _)):
            return .json(["redirectUri": redirectURI], noStore: true)
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

    /// One log line and one metric per attempt. The client id is logged only once the client
    /// was found (a caller can type anything into that field).
    static func record(_ outcome: Result<NativeLoginResult, NativeLoginError>, realmID: String, clientID: String,
                       request: HTTPRequest, context: HeraldContext, started: UInt64) {
        let durationMs = Double(DispatchTime.now().uptimeNanoseconds - started) / 1_000_000
        let outcomeLabel: String
        let reason: String
        var accountID = ""
        var clientKnown = true
        switch outcome {
        case .success(let result):
            outcomeLabel = "success"
            reason = result.isNewUser ? "created" : "existing"
            accountID = result.accountID
        case .failure(let error):
            outcomeLabel = [.internalFailure, .appleUnavailable, .serviceUnavailable].contains(error.code) ? "error" : "rejected"
            reason = error.reason
            accountID = error.accountID ?? ""
            clientKnown = ![.badRequest, .realmNotFound, .rateLimited, .providerNotConfigured, .unknownClient,
                            .tokenTooLarge, .internalFailure, .serviceUnavailable].contains(error.code)
        }
        let realmLabel = InputRules.isSlug(realmID) ? realmID : "invalid"
        context.metrics.recordLogin(provider: AppleNativeLogin.provider, outcome: outcomeLabel, reason: reason)
        context.logger.info("login", [
            "realm": .string(realmLabel), "provider": .string(AppleNativeLogin.provider),
            "client": .string(clientKnown ? clientID : "unknown"), "outcome": .string(outcomeLabel),
            "reason": .string(reason), "accountId": .string(accountID),
            "durationMs": .double((durationMs * 100).rounded() / 100), "requestId": .string(request.requestID),
        ])
    }
}

extension APIError {
    /// The contract's answer for a failed native login.
    init(_ error: NativeLoginError) {
        switch error.code {
        case .badRequest:
            self = .badRequest("Invalid request")
        case .realmNotFound:
            self = .notFound("Realm")
        case .providerNotConfigured:
            self = APIError(status: 404, code: "provider_not_configured",
                            message: "Apple provider not configured or not enabled")
        case .unknownClient:
            self = APIError(status: 400, code: "bad_request", message: "Unknown or disabled client",
                            details: ["fields": .object(["clientId": .string("unknown or disabled client")])])
        case .clientNotAllowed:
            self = APIError(status: 403, code: "client_not_allowed",
                            message: "This client may not use native login without a downstream authorization")
        case .tokenTooLarge:
            self = APIError(status: 400, code: "bad_request", message: "Identity token too large",
                            details: ["fields": .object(["identityToken": .string(
                                "must be at most \(AppleIdentityVerifier.maximumTokenBytes) bytes")])])
        case .invalidAppleToken:
            let reason = error.appleReason?.rawValue ?? "malformed"
            self = APIError(status: 401, code: "invalid_apple_token", message: "Apple identity token rejected: \(reason)",
                            details: ["reason": .string(reason)])
        case .appleUnavailable:
            self = .serviceUnavailable(code: "apple_unavailable", retryAfter: error.retryAfterSeconds ?? 30)
        case .registrationDisabled:
            self = APIError(status: 409, code: "registration_disabled", message: "Registration is disabled in this realm")
        case .accountDisabled:
            self = .accountDisabled
        case .invalidDownstreamState:
            self = APIError(status: 400, code: "invalid_downstream_state",
                            message: "Unknown, expired or already used downstream state")
        case .rateLimited:
            self = .rateLimited(retryAfter: error.retryAfterSeconds ?? 60)
        case .serviceUnavailable:
            self = .storageUnavailable
        case .internalFailure:
            self = .internalError
        }
    }

    static let accountDisabled = APIError(status: 403, code: "account_disabled", message: "The account is disabled")
}

import Login

extension APIError {
    /// The contract's answer for a failed login with `provider`, through either door (native, web).
    init(_ error: LoginError, provider: LoginProvider) {
        switch error.code {
        case .badRequest:
            self = .badRequest("Invalid request")
        case .realmNotFound:
            self = .notFound("Realm")
        case .providerNotConfigured:
            self = APIError(status: 404, code: "provider_not_configured",
                            message: "\(provider.title) provider not configured or not enabled")
        case .unknownClient:
            self = APIError(status: 400, code: "bad_request", message: "Unknown or disabled client",
                            details: ["fields": .object(["clientId": .string("unknown or disabled client")])])
        case .clientNotAllowed:
            self = APIError(status: 403, code: "client_not_allowed",
                            message: "This client may not use native login without a downstream authorization")
        case .tokenTooLarge:
            self = APIError(status: 400, code: "bad_request", message: "Identity token too large",
                            details: ["fields": .object([provider.tokenField: .string(
                                "must be at most \(provider.maximumTokenBytes) bytes")])])
        case .invalidIdentityToken:
            let reason = error.providerReason ?? "malformed"
            self = APIError(status: 401, code: provider.invalidTokenCode,
                            message: "\(provider.title) identity token rejected: \(reason)",
                            details: ["reason": .string(reason)])
        case .providerUnavailable:
            self = .serviceUnavailable(code: provider.unavailableCode, retryAfter: error.retryAfterSeconds ?? 30)
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

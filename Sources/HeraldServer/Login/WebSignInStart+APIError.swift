import Login

extension APIError {
    /// The contract's answer for a web sign-in that could not start with `provider`.
    init(_ refusal: WebSignInStart.Refusal, provider: LoginProvider, setup: String) {
        switch refusal {
        case .realmNotFound: self = .notFound("Realm")
        case .providerNotConfigured:
            self = APIError(status: 404, code: "provider_not_configured",
                            message: "\(provider.title) provider not configured for the web flow (\(setup))")
        case .unknownClient:
            self = .invalidFields(["clientId": "unknown or disabled client"])
        case .clientNotAllowed:
            self = APIError(status: 403, code: "client_not_allowed",
                            message: "This client may not sign in without a downstream authorization")
        case .returnToNotRegistered:
            self = .invalidFields(["returnTo": "must be one of the client's registered redirect URIs"])
        case .downstreamStateNotPending:
            self = .invalidFields(["downstreamState": "names no pending authorization of this client"])
        }
    }
}

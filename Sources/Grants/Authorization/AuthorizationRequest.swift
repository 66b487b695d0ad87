import Realms

/// A validated /authorize request (RFC 6749 §4.1.1 with RFC 7636 S256).
public struct AuthorizationRequest: Sendable, Equatable {
    public let clientID: String
    /// The client registration it was validated against (`ClientApp.instanceID`): a client
    /// deleted and created again under the same id does not complete or redeem it.
    public let clientInstanceID: String
    public let redirectURI: String
    public let state: String
    public let codeChallenge: String
    public let scope: [String]
    public let nonce: String?

    static let maxStateLength = 512
    static let maxNonceLength = 512
    static let maxClientIDLength = 128
    static let maxRedirectURILength = 2048
    static let maxScopeLength = 1024

    /// Validates the query parameters of /authorize against the registered client.
    /// Problems with the client or redirect URI are never redirected (the redirect target is
    /// not trusted yet); every later problem goes back to the client's redirect URI.
    public static func validate(_ parameters: [(name: String, value: String)],
                                client lookup: (String) async throws -> ClientApp?) async throws -> AuthorizationValidation {
        var values: [String: String] = [:]
        var repeated: Set<String> = []
        for (name, value) in parameters {
            if values[name] != nil { repeated.insert(name) }
            values[name] = value
        }
        // RFC 6749 §3.1: parameters must not be repeated; a repeated client_id or redirect_uri
        // leaves us not knowing where to redirect.
        for name in ["client_id", "redirect_uri"] where repeated.contains(name) {
            return .rejected(GrantsError(.invalidRequest, "\(name) is repeated"))
        }
        guard let clientID = values["client_id"], !clientID.isEmpty, clientID.utf8.count <= maxClientIDLength else {
            return .rejected(GrantsError(.invalidRequest, "client_id is missing or too long"))
        }
        guard let redirectURI = values["redirect_uri"], !redirectURI.isEmpty,
              redirectURI.utf8.count <= maxRedirectURILength else {
            return .rejected(GrantsError(.invalidRequest, "redirect_uri is missing or too long"))
        }
        guard let client = try await lookup(clientID), client.enabled else {
            return .rejected(GrantsError(.unauthorizedClient, "unknown or disabled client"))
        }
        guard client.redirectUris.contains(redirectURI) else {
            return .rejected(GrantsError(.invalidRequest, "redirect_uri is not registered for this client"))
        }

        // From here on errors are redirected; the state is echoed only when it is usable.
        let rawState = values["state"]
        let echoState = rawState.flatMap { isVisibleASCII($0, maxLength: maxStateLength) && !repeated.contains("state") ? $0 : nil }
        func redirected(_ code: GrantsError.Code, _ message: String) -> AuthorizationValidation {
            .redirectedError(GrantsError(code, message), redirectURI: redirectURI, state: echoState)
        }
        if let name = repeated.sorted().first { return redirected(.invalidRequest, "\(name) is repeated") }
        guard let responseType = values["response_type"] else {
            return redirected(.invalidRequest, "response_type is required")
        }
        guard responseType == "code" else {
            return redirected(.unsupportedResponseType, "response_type must be code")
        }
        guard let state = rawState, !state.isEmpty else { return redirected(.invalidRequest, "state is required") }
        guard echoState != nil else {
            return redirected(.invalidRequest, "state must be at most \(maxStateLength) visible ASCII characters")
        }
        guard let method = values["code_challenge_method"] else {
            return redirected(.invalidRequest, "code_challenge_method S256 is required")
        }
        guard method == PKCE.method else {
            return redirected(.invalidRequest, "code_challenge_method must be S256 (plain is not supported)")
        }
        guard let challenge = values["code_challenge"], PKCE.isValidChallenge(challenge) else {
            return redirected(.invalidRequest, "code_challenge must be 43-128 base64url characters")
        }
        var scope = Scope.defaultScope
        if let text = values["scope"] {
            guard text.utf8.count <= maxScopeLength, let parsed = Scope.parse(text) else {
                return redirected(.invalidScope, "scope is malformed")
            }
            if !parsed.isEmpty { scope = parsed }
        }
        guard scope.allSatisfy(client.allowedScopes.contains) else {
            return redirected(.invalidScope, "scope is not allowed for this client")
        }
        var nonce: String?
        if let text = values["nonce"] {
            guard !text.isEmpty, isVisibleASCII(text, maxLength: maxNonceLength) else {
                return redirected(.invalidRequest, "nonce must be at most \(maxNonceLength) visible ASCII characters")
            }
            nonce = text
        }
        return .accepted(AuthorizationRequest(clientID: clientID, clientInstanceID: client.instanceID,
                                              redirectURI: redirectURI, state: state,
                                              codeChallenge: challenge, scope: scope, nonce: nonce))
    }

    /// RFC 6749's VSCHAR (%x20-7E), bounded.
    static func isVisibleASCII(_ text: String, maxLength: Int) -> Bool {
        !text.isEmpty && text.utf8.count <= maxLength && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }
}

/// The verdict on an /authorize request.
public enum AuthorizationValidation: Sendable, Equatable {
    case accepted(AuthorizationRequest)
    /// Client or redirect URI not trusted: answer 400 with the error body, never redirect.
    case rejected(GrantsError)
    /// Redirect the error to the client (`error`, `error_description`, `state`, `iss`).
    case redirectedError(GrantsError, redirectURI: String, state: String?)
}

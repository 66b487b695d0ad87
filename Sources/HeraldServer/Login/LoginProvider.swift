import ProviderKeys

/// The words a provider's login uses in the contract: its name (logs, metrics, error codes),
/// how users see it, and the request field that carries its token. Everything else about a
/// login is the pipeline's and the same for every provider.
struct LoginProvider: Sendable {
    /// `apple`, `google`: `IdentityTokenLogin.provider`, and the stem of the error codes.
    let name: String
    /// For messages: "Apple".
    let title: String
    /// The native-login body's token field (`identityToken` for Apple, `idToken` for Google).
    let tokenField: String

    static let apple = LoginProvider(name: "apple", title: "Apple", tokenField: "identityToken")
    static let google = LoginProvider(name: "google", title: "Google", tokenField: "idToken")

    /// 401 for a refused token: `invalid_apple_token`, `invalid_google_token`.
    var invalidTokenCode: String { "invalid_\(name)_token" }
    /// 503 while the provider's keys cannot be had: `apple_unavailable`, `google_unavailable`.
    var unavailableCode: String { "\(name)_unavailable" }
    /// Longest token the pipeline reads (the same bound for every provider).
    var maximumTokenBytes: Int { IdentityTokenBounds.maximumTokenBytes }
}

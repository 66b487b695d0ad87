/// What a client presented at the token, revocation or introspection endpoint: HTTP Basic
/// (`client_secret_basic`), body fields (`client_secret_post`), or only `client_id` (`none`).
public struct ClientCredentials: Sendable, Equatable {
    /// How the client authenticated.
    public enum Method: Sendable, Equatable { case basic, post, none }

    public let clientID: String
    public let secret: String?
    public let method: Method

    /// Credentials as presented.
    public init(clientID: String, secret: String?, method: Method) {
        self.clientID = clientID
        self.secret = secret
        self.method = method
    }

    /// Combines HTTP Basic credentials (already decoded: `basic`) with the body's `client_id` /
    /// `client_secret`. Throws `invalidRequest` when two methods are mixed and `invalidClient`
    /// when the client is not named.
    public static func read(basic: (clientID: String, secret: String)?, bodyClientID: String?,
                            bodyClientSecret: String?) throws(GrantsError) -> ClientCredentials {
        let bodyClientID = bodyClientID.flatMap { $0.isEmpty ? nil : $0 }
        let bodySecret = bodyClientSecret.flatMap { $0.isEmpty ? nil : $0 }
        if let basic {
            guard bodySecret == nil else {
                throw GrantsError(.invalidRequest, "use one client authentication method, not two")
            }
            if let bodyClientID, bodyClientID != basic.clientID {
                throw GrantsError(.invalidRequest, "client_id does not match the authenticated client")
            }
            // `id:` with an empty secret is how some libraries send a public client's id.
            return ClientCredentials(clientID: basic.clientID, secret: basic.secret.isEmpty ? nil : basic.secret,
                                     method: .basic)
        }
        guard let bodyClientID else { throw GrantsError(.invalidClient, "client authentication is required") }
        return ClientCredentials(clientID: bodyClientID, secret: bodySecret, method: bodySecret == nil ? .none : .post)
    }
}

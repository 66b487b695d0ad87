import Foundation
import JOSE

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

    /// Reads the credentials from the `Authorization` header and the body's `client_id` /
    /// `client_secret`. Throws `invalidClient` for a malformed Basic header and
    /// `invalidRequest` when two methods are mixed or the client is not named.
    public static func read(authorization: String?, bodyClientID: String?,
                            bodyClientSecret: String?) throws(GrantsError) -> ClientCredentials {
        let bodyClientID = bodyClientID.flatMap { $0.isEmpty ? nil : $0 }
        let bodySecret = bodyClientSecret.flatMap { $0.isEmpty ? nil : $0 }
        if let authorization, let basic = try basicCredentials(authorization) {
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

    /// Parses `Basic base64(urlencode(id):urlencode(secret))`; nil for another scheme
    /// (e.g. a Bearer header is not client authentication).
    static func basicCredentials(_ header: String) throws(GrantsError) -> (clientID: String, secret: String)? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { return nil }
        let encoded = parts[1].trimmingCharacters(in: .whitespaces)
        guard encoded.utf8.count <= 2048, let decoded = Data(base64Encoded: encoded),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
              let clientID = FormEncoding.decode(String(text[..<colon])),
              let secret = FormEncoding.decode(String(text[text.index(after: colon)...])), !clientID.isEmpty
        else { throw GrantsError(.invalidClient, "malformed Basic credentials") }
        return (clientID, secret)
    }
}

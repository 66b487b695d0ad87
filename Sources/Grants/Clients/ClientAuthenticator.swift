import Foundation
import Realms
import Storage

/// Authenticates clients at the token, revocation and introspection endpoints: confidential
/// clients by their secret (hash compared in constant time by `ClientAppStore`), public
/// clients by `client_id` alone. Every failure is `invalidClient` with the same message, so
/// the answer does not reveal whether the client exists.
public struct ClientAuthenticator: Sendable {
    private let clients: ClientAppStore

    /// An authenticator reading clients from `clients`.
    public init(clients: ClientAppStore) {
        self.clients = clients
    }

    /// The enabled client the credentials prove, or `invalidClient`. A confidential client
    /// must send its secret; a public client must not send one.
    public func authenticate(realmID: String, _ credentials: ClientCredentials) async throws -> ClientApp {
        let failed = GrantsError(.invalidClient, "client authentication failed")
        if let secret = credentials.secret {
            guard let client = try await clients.authenticate(realmID: realmID, clientID: credentials.clientID,
                                                              secret: secret) else { throw failed }
            return client
        }
        guard let client = try await clients.client(realmID: realmID, clientID: credentials.clientID),
              client.enabled, !client.confidential else { throw failed }
        return client
    }
}

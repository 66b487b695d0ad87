import Realms

/// Who presents a refresh token, and so what its session's client must be at that moment.
public enum RefreshPresenter: Sendable {
    /// The token endpoint authenticated this client (by its secret, or a public client by its
    /// id): the session must belong to this very registration of it.
    case authenticatedClient(ClientApp)
    /// The first-party session API, which proves nothing about the client it is told: the
    /// session's client must be a public first-party app (`ClientStanding.usesSessionAPI`);
    /// a confidential client refreshes at the token endpoint with its authentication.
    case sessionAPI(clientID: String)

    /// The answer the presenter's refresh is issued for.
    var answer: SessionAnswer {
        switch self {
        case .authenticatedClient: .tokenEndpoint
        case .sessionAPI: .firstParty
        }
    }

    /// The client id the presenter speaks for.
    var clientID: String {
        switch self {
        case .authenticatedClient(let client): client.clientId
        case .sessionAPI(let clientID): clientID
        }
    }
}

/// What a route needs of an access token's client, beyond a valid token of a live session.
public enum AccessRequirement: Sendable {
    /// Any client of the realm: `userinfo`, introspection and revocation apply the token's
    /// (capped) scope themselves.
    case anyClient
    /// A client the first-party session API serves (`/me`, logout): a public first-party app.
    case sessionAPIClient
    /// Deleting the token's own account (`DELETE /me`): a client the session API serves, or any
    /// other client whose token's scope, capped by what the client may still be granted, holds
    /// ``accountDeletionScope``. A partner's backend must be granted that power explicitly.
    case accountDeletion

    /// The scope that lets a confidential or third-party client's token delete its account.
    public static let accountDeletionScope = "account:delete"

    /// Whether a token of `client` with the (capped) `scope` meets the requirement.
    func admits(_ client: ClientStanding, scope: [String]) -> Bool {
        switch self {
        case .anyClient: true
        case .sessionAPIClient: client.usesSessionAPI
        case .accountDeletion: client.usesSessionAPI || scope.contains(Self.accountDeletionScope)
        }
    }
}

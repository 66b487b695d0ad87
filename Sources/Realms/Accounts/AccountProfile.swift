import Storage

/// An account with its linked identities: what `/me` shows, and what first-party login and
/// refresh responses carry as `user` so an app needs no second request.
public struct AccountProfile: Sendable, Equatable {
    public let account: Account
    public let identities: [Identity]

    public init(account: Account, identities: [Identity]) {
        self.account = account
        self.identities = identities
    }

    /// The profile of `account` as of the caller's transaction (its identities read there).
    public static func load(_ db: any SQLExecutor, account: Account) throws -> AccountProfile {
        AccountProfile(account: account,
                       identities: try AccountStore.identities(db, realmID: account.realmId, accountID: account.id))
    }
}

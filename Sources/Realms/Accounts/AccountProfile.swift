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

    /// The same profile, its identities read as the caller's write transaction leaves them,
    /// with its COMMIT (`SQLExecutor.queryDeferred`: no round trip of its own on PostgreSQL).
    public static func loadDeferred(_ db: any SQLExecutor, account: Account) throws -> Deferred {
        let statement = AccountStore.identitiesStatement(realmID: account.realmId, accountID: account.id)
        return Deferred(account: account, identities: try db.queryDeferred(statement.sql, statement.parameters))
    }

    /// A profile whose identities are read with its transaction's COMMIT.
    public struct Deferred: Sendable {
        let account: Account
        let identities: DeferredRows

        /// The profile, once the transaction has committed.
        public func profile() throws -> AccountProfile {
            AccountProfile(account: account, identities: try AccountStore.identities(fromRows: identities.rows()))
        }
    }
}

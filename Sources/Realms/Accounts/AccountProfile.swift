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
    /// with its COMMIT (`SQLExecutor.queryDeferred`: no round trip of its own on PostgreSQL);
    /// `knownIdentities` when the caller already has them as it leaves them (a returning
    /// login's resolution read them with the account), which sends no statement at all.
    public static func loadDeferred(_ db: any SQLExecutor, account: Account, knownIdentities: [Identity]? = nil) throws -> Deferred {
        if let knownIdentities { return Deferred(account: account, identities: .known(knownIdentities)) }
        let statement = AccountStore.identitiesStatement(realmID: account.realmId, accountID: account.id)
        return Deferred(account: account, identities: .read(try db.queryDeferred(statement.sql, statement.parameters)))
    }

    /// A profile whose identities are read with its transaction's COMMIT, or were known before it.
    public struct Deferred: Sendable {
        enum Identities: Sendable {
            case known([Identity])
            case read(DeferredRows)
        }

        let account: Account
        let identities: Identities

        /// The profile, once the transaction has committed.
        public func profile() throws -> AccountProfile {
            switch identities {
            case .known(let identities):
                AccountProfile(account: account, identities: identities)
            case .read(let rows):
                AccountProfile(account: account, identities: try AccountStore.identities(fromRows: rows.rows()))
            }
        }
    }
}

import Storage

/// An account as a session sees it each time one of its tokens is used: whether it may still
/// use its sessions. Disabling or deleting an account therefore reaches its live sessions at
/// once. Like ``ClientStanding``, TokenIssuer reads it by joining `accounts` onto the session
/// row it reads anyway (Realms owns the SQL), so using a token costs no extra query.
public enum AccountStanding: Sendable, Equatable {
    case active
    case disabled
    /// Deleted, or a status this version does not know (it never widens to active).
    case deleted

    /// `JOIN accounts` as `standing_account` on the row's account id column (`s.account_id`).
    /// An inner join: sessions reference `accounts(id)` with `ON DELETE CASCADE`, so a session
    /// whose account row is gone is gone too, and such a row is not found.
    public static func join(accountColumn: String) -> String {
        "JOIN accounts standing_account ON standing_account.id = \(accountColumn)"
    }

    /// The select list that ``init(joinedRow:)`` reads, for a query using ``join(accountColumn:)``.
    public static let columns = "standing_account.status AS standing_account_status"

    /// A select list of the joined account's every column, for a query that needs the account
    /// itself and not only its standing; read them with ``account(joinedRow:)``. It names the
    /// status as ``columns`` does, so a query selects one list or the other and
    /// ``init(joinedRow:)`` reads either.
    public static let accountColumns = joinedNames.selectList(alias: "standing_account")

    private static let joinedNames = AccountColumnNames(prefix: "standing_account_")

    /// The joined account, from a row that selected ``accountColumns``.
    public static func account(joinedRow row: Row) throws -> Account {
        try AccountStore.account(from: row, names: joinedNames)
    }

    /// `LEFT JOIN identities` of the joined account, for a query that also wants the account's
    /// identities: one row per identity (or one without any), each selecting
    /// ``identityColumns``; read them with ``identities(joinedRows:)``.
    public static let identitiesJoin = """
        LEFT JOIN identities standing_identity ON standing_identity.realm_id = standing_account.realm_id
            AND standing_identity.account_id = standing_account.id
        """

    /// The select list ``identities(joinedRows:)`` reads, for a query using ``identitiesJoin``.
    public static let identityColumns = AccountStore.linkedIdentityColumns(alias: "standing_identity")

    /// The joined account's identities, oldest first, from every row of a query using
    /// ``identitiesJoin`` and selecting ``accountColumns`` and ``identityColumns``.
    public static func identities(joinedRows rows: [Row]) throws -> [Identity] {
        try AccountStore.linkedIdentities(fromRows: rows, names: joinedNames)
    }

    /// The joined account's standing.
    public init(joinedRow row: Row) throws(StorageError) {
        switch AccountStatus(rawValue: try row.string("standing_account_status")) {
        case .active?: self = .active
        case .disabled?: self = .disabled
        case .deleted?, nil: self = .deleted
        }
    }
}

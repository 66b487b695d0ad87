/// The names `AccountStore.account(from:)` reads an account's columns by: as stored (a query's
/// `SELECT *` or `a.*`), or prefixed, for a query that joins `accounts` beside tables with
/// columns of the same names (`AccountStanding.accountColumns`).
struct AccountColumnNames: Sendable {
    /// Every column an `Account` is read from.
    private static let stored = ["id", "realm_id", "email", "email_verified", "is_private_email", "given_name",
                                 "family_name", "display_name", "picture_url", "status", "created_at", "updated_at"]

    static let asStored = AccountColumnNames(prefix: "")

    let prefix: String
    let id, realmID, email, emailVerified, isPrivateEmail, givenName, familyName, displayName, pictureURL, status,
        createdAt, updatedAt: String

    init(prefix: String) {
        self.prefix = prefix
        id = prefix + "id"
        realmID = prefix + "realm_id"
        email = prefix + "email"
        emailVerified = prefix + "email_verified"
        isPrivateEmail = prefix + "is_private_email"
        givenName = prefix + "given_name"
        familyName = prefix + "family_name"
        displayName = prefix + "display_name"
        pictureURL = prefix + "picture_url"
        status = prefix + "status"
        createdAt = prefix + "created_at"
        updatedAt = prefix + "updated_at"
    }

    /// The select list naming the columns of `accounts` joined as `alias` by these names.
    func selectList(alias: String) -> String {
        Self.stored.map { "\(alias).\($0) AS \(prefix)\($0)" }.joined(separator: ", ")
    }
}

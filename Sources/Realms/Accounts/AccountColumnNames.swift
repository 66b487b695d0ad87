/// The names `AccountStore.account(from:)` reads an account's columns by: as stored (a query's
/// `SELECT *` or `a.*`), or prefixed, for a query that joins `accounts` beside tables with
/// columns of the same names (`AccountStanding.accountColumns`).
struct AccountColumnNames: Sendable {
    static let asStored = AccountColumnNames(prefix: "")

    let prefix: String
    let id, realmID, email, emailVerified, isPrivateEmail, givenName, familyName, displayName, pictureURL, status,
        createdAt, updatedAt: String

    init(prefix: String) {
        self.prefix = prefix
        func named(_ column: String) -> String { prefix + column }
        (id, realmID, email, emailVerified) = (named("id"), named("realm_id"), named("email"), named("email_verified"))
        (isPrivateEmail, givenName, familyName) = (named("is_private_email"), named("given_name"), named("family_name"))
        (displayName, pictureURL, status) = (named("display_name"), named("picture_url"), named("status"))
        (createdAt, updatedAt) = (named("created_at"), named("updated_at"))
    }

    /// The select list naming the columns of `accounts` joined as `alias` by these names: each
    /// name above without its prefix is the stored column.
    func selectList(alias: String) -> String {
        [id, realmID, email, emailVerified, isPrivateEmail, givenName, familyName, displayName, pictureURL, status,
         createdAt, updatedAt]
            .map { "\(alias).\($0.dropFirst(prefix.count)) AS \($0)" }.joined(separator: ", ")
    }
}

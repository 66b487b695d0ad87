/// What an operator may change on an account. `status` may be `active` or `disabled`
/// (deletion is its own operation); `name` is doubly optional: `.some(nil)` clears it.
public struct AccountChanges: Sendable, Equatable {
    public var status: AccountStatus?
    public var email: String?
    public var emailVerified: Bool?
    public var name: PersonName??

    public init(status: AccountStatus? = nil, email: String? = nil, emailVerified: Bool? = nil, name: PersonName?? = nil) {
        self.status = status
        self.email = email
        self.emailVerified = emailVerified
        self.name = name
    }

    /// Problems with the given fields on their own, by API field name (`name.givenName`).
    public func fieldIssues() -> [FieldIssue] {
        var issues = FieldIssues()
        if status == .deleted { issues.add("status", "must be active or disabled; delete the account instead") }
        if let email, let problem = InputRules.emailProblem(email) { issues.add("email", problem) }
        if let name { name?.validate(into: &issues) }
        return issues.all
    }

    /// The account with these changes applied, or every field problem found.
    func applied(to account: Account) throws(RealmsError) -> Account {
        let issues = fieldIssues()
        if !issues.isEmpty { throw RealmsError.invalid(issues) }
        var result = account
        if let status { result.status = status }
        if let email { result.email = AccountStore.normalizedEmail(email) }
        if let emailVerified { result.emailVerified = emailVerified }
        if let name { result.name = name ?? PersonName() }
        return result
    }
}

/// A new account as login creates it.
public struct NewAccount: Sendable, Equatable {
    public var email: String
    public var emailVerified: Bool
    public var isPrivateEmail: Bool
    public var name: PersonName
    /// The profile photo's URL, as `AccountResolver` accepted it from the provider.
    public var pictureURL: String?
    public var status: AccountStatus

    public init(email: String, emailVerified: Bool = false, isPrivateEmail: Bool = false, name: PersonName = PersonName(),
                pictureURL: String? = nil, status: AccountStatus = .active) {
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.name = name
        self.pictureURL = pictureURL
        self.status = status
    }
}

/// Filters of the account list; all given filters must match.
public struct AccountFilter: Sendable, Equatable {
    /// Exact address (compared lowercased).
    public var email: String?
    public var status: AccountStatus?
    /// Accounts with at least one identity of this provider (`apple`).
    public var provider: String?

    public init(email: String? = nil, status: AccountStatus? = nil, provider: String? = nil) {
        self.email = email
        self.status = status
        self.provider = provider
    }
}

import TokenIssuer

/// A successful login.
public enum LoginResult: Sendable {
    /// Branch A: the first-party app's own session.
    case session(IssuedTokens, isNewUser: Bool)
    /// Branch B: the pending authorization completed; redirect the user agent here.
    case downstream(redirectURI: String, accountID: String, isNewUser: Bool)

    /// The account that logged in.
    public var accountID: String {
        switch self {
        case .session(let tokens, _): tokens.accountID
        case .downstream(_, let accountID, _): accountID
        }
    }

    public var isNewUser: Bool {
        switch self {
        case .session(_, let isNew), .downstream(_, _, let isNew): isNew
        }
    }
}

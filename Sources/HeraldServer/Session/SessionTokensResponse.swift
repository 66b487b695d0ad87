import TokenIssuer

/// The first-party token response (native login branch A, session refresh).
struct SessionTokensResponse: Encodable, Sendable {
    let message: String
    let userId: String
    let accessToken: String
    let refreshToken: String
    let expiresIn: Int
    let refreshExpiresIn: Int
    let tokenType = "Bearer"
    let isNewUser: Bool

    init(message: String, tokens: IssuedTokens, isNewUser: Bool) {
        self.message = message
        userId = tokens.accountID
        accessToken = tokens.accessToken
        refreshToken = tokens.refreshToken
        expiresIn = tokens.expiresIn
        refreshExpiresIn = tokens.refreshExpiresIn
        self.isNewUser = isNewUser
    }
}

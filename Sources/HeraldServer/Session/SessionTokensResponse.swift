import TokenIssuer

/// The first-party token response (native login branch A, session refresh), with the account
/// as `user` in the `/me` shape so the app needs no second request after signing in.
struct SessionTokensResponse: Encodable, Sendable {
    let message: String
    let userId: String
    let accessToken: String
    let refreshToken: String
    let expiresIn: Int
    let refreshExpiresIn: Int
    let tokenType = "Bearer"
    let isNewUser: Bool
    let user: MeResponse

    /// Throws 500 when `tokens` came without the profile its issuer was asked to read (a
    /// programming error; the caller's route always asks for it).
    init(message: String, tokens: IssuedTokens, isNewUser: Bool) throws(APIError) {
        guard let profile = tokens.profile else { throw APIError.internalError }
        self.message = message
        userId = tokens.accountID
        accessToken = tokens.accessToken
        refreshToken = tokens.refreshToken
        expiresIn = tokens.expiresIn
        refreshExpiresIn = tokens.refreshExpiresIn
        self.isNewUser = isNewUser
        user = MeResponse(profile)
    }
}

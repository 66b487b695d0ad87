import JOSE
import TokenIssuer

/// The first-party token response (native login branch A, session refresh), with the account
/// as `user` in the `/me` shape so the app needs no second request after signing in.
struct SessionTokensResponse: Sendable {
    let message: String
    let tokens: IssuedTokens
    let isNewUser: Bool
    let user: MeResponse

    /// Throws 500 when `tokens` came without the profile its issuer was asked to read (a
    /// programming error; the caller's route always asks for it).
    init(message: String, tokens: IssuedTokens, isNewUser: Bool) throws(APIError) {
        guard let profile = tokens.profile else { throw APIError.internalError }
        self.message = message
        self.tokens = tokens
        self.isNewUser = isNewUser
        user = MeResponse(profile)
    }

    /// The JSON body, members in ascending key order (`JSONObjectWriter`'s rule).
    var body: [UInt8] {
        var writer = JSONObjectWriter(capacity: 2_048)  // two tokens and the profile, without regrowing
        writer.add("accessToken", tokens.accessToken)
        writer.add("expiresIn", tokens.expiresIn)
        writer.add("isNewUser", isNewUser)
        writer.add("message", message)
        writer.add("refreshExpiresIn", tokens.refreshExpiresIn)
        writer.add("refreshToken", tokens.refreshToken)
        writer.add("tokenType", "Bearer")
        writer.addObject("user") { user.writeMembers(to: &$0) }
        writer.add("userId", tokens.accountID)
        return writer.finish()
    }
}

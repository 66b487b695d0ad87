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

    var json: JSONValue {
        [
            "message": .string(message), "userId": .string(tokens.accountID), "accessToken": .string(tokens.accessToken),
            "refreshToken": .string(tokens.refreshToken), "expiresIn": .number(Double(tokens.expiresIn)),
            "refreshExpiresIn": .number(Double(tokens.refreshExpiresIn)), "tokenType": "Bearer",
            "isNewUser": .bool(isNewUser), "user": user.json,
        ]
    }
}

/// What one realm accepts for one native-login request.
public struct AppleVerificationPolicy: Sendable, Equatable {
    /// The realm's Apple audiences: its Services ID (`clientId`) and every Bundle ID. Case-sensitive.
    public var audiences: Set<String>
    /// When true (the realm default) both the request nonce and the token's `nonce` claim are required.
    public var nonceRequired: Bool
    /// The raw nonce the app sent; the token carries its lowercase hex SHA-256. An empty string counts as absent.
    public var rawNonce: String?
    /// The realm the request is for; scopes replay protection.
    public var realmID: String

    /// Creates a policy.
    public init(audiences: Set<String>, nonceRequired: Bool, rawNonce: String?, realmID: String) {
        self.audiences = audiences
        self.nonceRequired = nonceRequired
        self.rawNonce = rawNonce
        self.realmID = realmID
    }
}

/// What one realm accepts for one Google login request.
public struct GoogleVerificationPolicy: Sendable, Equatable {
    /// The realm's client ids and hosted domain.
    public var requirements: GoogleRealmRequirements
    /// When true (the realm default) both the request nonce and the token's `nonce` claim are required.
    public var nonceRequired: Bool
    /// The nonce the app sent; Google carries it verbatim. An empty string counts as absent.
    public var rawNonce: String?
    /// The realm the request is for; scopes replay protection.
    public var realmID: String

    /// Creates a policy.
    public init(requirements: GoogleRealmRequirements, nonceRequired: Bool, rawNonce: String?, realmID: String) {
        self.requirements = requirements
        self.nonceRequired = nonceRequired
        self.rawNonce = rawNonce
        self.realmID = realmID
    }
}

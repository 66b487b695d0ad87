/// What a grant (native login, authorization code) asks a new session for.
public struct SessionRequest: Sendable {
    public var realmID: String
    public var clientID: String
    /// The registration of the client the grant was made to (`ClientApp.instanceID`): the
    /// session dies with it, and a client created anew under the same id does not inherit it.
    public var clientInstanceID: String
    public var accountID: String
    public var scope: [String]
    /// The IP the session is bound to when `ipBinding` is set.
    public var clientIP: String
    /// When the user authenticated (unix seconds), for the ID token's `auth_time`.
    public var authTime: Int64
    /// From /authorize; goes into the ID token.
    public var nonce: String?
    /// Realm defaults or client overrides, resolved by the caller (seconds).
    public var accessTokenTTL: Int
    public var refreshTokenTTL: Int
    /// The session ends when unused (not refreshed) for this long; nil: only the absolute
    /// lifetime ends it. Client override, else the realm's, resolved by the caller (seconds).
    public var refreshIdleTTL: Int?
    public var ipBinding: Bool

    /// A request with every field given (`nonce` optional).
    public init(realmID: String, clientID: String, clientInstanceID: String, accountID: String, scope: [String],
                clientIP: String,
                authTime: Int64, nonce: String? = nil, accessTokenTTL: Int, refreshTokenTTL: Int, refreshIdleTTL: Int? = nil,
                ipBinding: Bool) {
        self.realmID = realmID
        self.clientID = clientID
        self.clientInstanceID = clientInstanceID
        self.accountID = accountID
        self.scope = scope
        self.clientIP = clientIP
        self.authTime = authTime
        self.nonce = nonce
        self.accessTokenTTL = accessTokenTTL
        self.refreshTokenTTL = refreshTokenTTL
        self.refreshIdleTTL = refreshIdleTTL
        self.ipBinding = ipBinding
    }
}

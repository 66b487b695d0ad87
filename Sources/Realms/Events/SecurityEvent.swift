/// What kind of security event happened. Raw values are the API's `type` strings.
public enum SecurityEventType: String, Sendable, CaseIterable, Codable {
    /// A native login issued a session (branch A) or completed an authorization (branch B).
    case loginSucceeded = "login.succeeded"
    /// A native login refused for a reason that is the caller's (counted against the limit).
    case loginFailed = "login.failed"
    /// A rotated refresh token was presented again: its whole session was revoked.
    case refreshTokenReused = "refresh_token.reused"
    /// An authorization code was redeemed twice: what it issued was revoked.
    case authorizationCodeReused = "authorization_code.reused"
    /// An admin disabled the account (its sessions were revoked).
    case accountDisabled = "account.disabled"
    /// An admin enabled a disabled account again.
    case accountEnabled = "account.enabled"
    /// An admin deleted the account (`reason`: what became of its Apple tokens, as for
    /// `account.deleted_by_user`), or Apple's `account-delete` notification did (`actor`
    /// `apple`, no reason: Apple ended the tokens itself).
    case accountDeleted = "account.deleted"
    /// The account's owner deleted it with their own session (`DELETE /api/auth/{realm}/me`);
    /// `sessionId`, `clientId` and `clientIp` name the request. `reason` is what became of
    /// its Apple tokens: `queued`, `not_stored` or `not_configured` (the answer's
    /// `appleTokenRevocation`).
    case accountDeletedByUser = "account.deleted_by_user"
    /// Apple refused an authorization-code exchange; `reason` is Apple's error
    /// (`invalid_client`: check the Team ID, Key ID and key; `invalid_grant`; `refused`).
    case appleCodeExchangeRefused = "apple.code_exchange_refused"
}

/// One recorded security event of a realm. It never holds a token, code, secret, nonce or
/// email: only ids, a reason label and the client's address.
public struct SecurityEvent: Sendable, Equatable, Codable {
    /// Increasing in insertion order; the list's cursor key.
    public let id: Int64
    public let realmId: String
    /// Unix seconds.
    public let at: Int64
    public let type: SecurityEventType
    /// Why: the rejection reason of a failed login (`audience`, `replayed`, `unknown_client`, …),
    /// `created` / `existing` for a successful one.
    public let reason: String?
    public let accountId: String?
    /// The client, once it was found (a caller can type anything into that field).
    public let clientId: String?
    public let sessionId: String?
    public let clientIp: String?
    /// The admin token's name when an admin caused it.
    public let actor: String?

    public init(id: Int64, realmId: String, at: Int64, type: SecurityEventType, reason: String?, accountId: String?,
                clientId: String?, sessionId: String?, clientIp: String?, actor: String?) {
        self.id = id
        self.realmId = realmId
        self.at = at
        self.type = type
        self.reason = reason
        self.accountId = accountId
        self.clientId = clientId
        self.sessionId = sessionId
        self.clientIp = clientIp
        self.actor = actor
    }

    private enum CodingKeys: String, CodingKey {
        case id, realmId, at, type, reason, accountId, clientId, sessionId, clientIp, actor
    }

    // Written out so an unknown field is `null`, not an absent key (one shape for every event).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(realmId, forKey: .realmId)
        try container.encode(at, forKey: .at)
        try container.encode(type, forKey: .type)
        try container.encode(reason, forKey: .reason)
        try container.encode(accountId, forKey: .accountId)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(sessionId, forKey: .sessionId)
        try container.encode(clientIp, forKey: .clientIp)
        try container.encode(actor, forKey: .actor)
    }
}

/// An event to record; the log assigns its id.
public struct NewSecurityEvent: Sendable, Equatable {
    public var realmID: String
    public var type: SecurityEventType
    public var at: Int64
    public var reason: String?
    public var accountID: String?
    public var clientID: String?
    public var sessionID: String?
    public var clientIP: String?
    public var actor: String?

    public init(realmID: String, type: SecurityEventType, at: Int64, reason: String? = nil, accountID: String? = nil,
                clientID: String? = nil, sessionID: String? = nil, clientIP: String? = nil, actor: String? = nil) {
        self.realmID = realmID
        self.type = type
        self.at = at
        self.reason = reason
        self.accountID = accountID
        self.clientID = clientID
        self.sessionID = sessionID
        self.clientIP = clientIP
        self.actor = actor
    }
}

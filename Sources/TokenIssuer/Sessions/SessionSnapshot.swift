import Storage

/// A session row's fields that token issuance needs.
struct SessionSnapshot: Sendable {
    let id: String
    let realmID: String
    let clientID: String
    let clientInstanceID: String
    let accountID: String
    var scope: [String]
    let authTime: Int64
    let accessTokenTTL: Int
    let expiresAt: Int64
    /// The idle timeout (seconds) and the deadline it sets from the last use; nil: none.
    let refreshIdleTTL: Int?
    var idleExpiresAt: Int64?

    init(id: String, realmID: String, clientID: String, clientInstanceID: String, accountID: String, scope: [String],
         authTime: Int64, accessTokenTTL: Int, expiresAt: Int64, refreshIdleTTL: Int?, idleExpiresAt: Int64?) {
        self.id = id
        self.realmID = realmID
        self.clientID = clientID
        self.clientInstanceID = clientInstanceID
        self.accountID = accountID
        self.scope = scope
        self.authTime = authTime
        self.accessTokenTTL = accessTokenTTL
        self.expiresAt = expiresAt
        self.refreshIdleTTL = refreshIdleTTL
        self.idleExpiresAt = idleExpiresAt
    }

    init(row: Row) throws {
        self.init(id: try row.string("id"), realmID: try row.string("realm_id"), clientID: try row.string("client_id"),
                  clientInstanceID: try row.string("client_instance"), accountID: try row.string("account_id"),
                  scope: try row.string("scope").split(separator: " ").map(String.init),
                  authTime: try row.int("auth_time"), accessTokenTTL: Int(try row.int("access_token_ttl")),
                  expiresAt: try row.int("expires_at"),
                  refreshIdleTTL: try row.optionalInt("refresh_idle_ttl").map { Int($0) },
                  idleExpiresAt: try row.optionalInt("idle_expires_at"))
    }
}

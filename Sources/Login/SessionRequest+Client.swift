import Realms
import TokenIssuer

extension SessionRequest {
    /// A session of `client` in `realm`, with the client's lifetimes where it sets them and
    /// the realm's otherwise (branch A and the code exchange alike).
    init(realm: Realm, client: ClientApp, accountID: String, scope: [String], clientIP: String, authTime: Int64,
         nonce: String? = nil) {
        self.init(realmID: realm.id, clientID: client.clientId, clientInstanceID: client.instanceID, accountID: accountID,
                  scope: scope, clientIP: clientIP, authTime: authTime, nonce: nonce,
                  accessTokenTTL: client.accessTokenTTL ?? realm.accessTokenTTL,
                  refreshTokenTTL: client.refreshTokenTTL ?? realm.refreshTokenTTL,
                  refreshIdleTTL: client.refreshIdleTTL ?? realm.refreshIdleTTL, ipBinding: client.ipBinding)
    }
}

import Foundation
import JOSE
import Realms
import Storage

/// Signs client secrets with a realm's stored Team ID, Key ID and `.p8` key, read (and the key
/// decrypted) for each call, so configuration changes apply at once.
public struct AppleCredentials: Sendable {
    private let database: any Database
    private let providers: AppleProviderStore
    private let now: @Sendable () -> Date

    public init(database: any Database, masterKey: MasterKey, now: @escaping @Sendable () -> Date) {
        self.database = database
        providers = AppleProviderStore(database: database, masterKey: masterKey, now: now)
        self.now = now
    }

    /// A fresh client secret of realm `realmID` for `clientID`.
    public func clientSecret(realmID: String, clientID: String) async -> Result<String, AppleAPIFailure> {
        do {
            guard let config = try await providers.config(realmID: realmID), let teamID = config.teamId,
                  let keyID = config.keyId, let key = try await providers.privateKey(realmID: realmID) else {
                return .failure(.notConfigured)
            }
            return .success(try AppleClientSecret.make(teamID: teamID, keyID: keyID, clientID: clientID, key: key,
                                                       at: now().unixSeconds))
        } catch is StorageError {
            return .failure(.storage)
        } catch {
            // A key that no longer opens or signs (master key changed, not a P-256 key).
            return .failure(.notConfigured)
        }
    }
}

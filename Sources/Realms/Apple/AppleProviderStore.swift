import Foundation
import JOSE
import Storage

/// Stores each realm's Apple provider. The private key is sealed under the master key with
/// the realm bound as context, so a sealed key cannot be replayed into another realm's row.
public struct AppleProviderStore: Sendable {
    private let database: any Database
    private let masterKey: MasterKey
    private let now: @Sendable () -> Date

    public init(database: any Database, masterKey: MasterKey, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.masterKey = masterKey
        self.now = now
    }

    /// The realm's Apple provider, or nil when none is configured.
    public func config(realmID: String) async throws -> AppleProviderConfig? {
        try await database.read { db in try Self.load(db, realmID: realmID) }
    }

    /// Creates or replaces the realm's Apple provider. Throws `notFound` (realm) or `invalidInput`.
    public func put(realmID: String, settings: AppleProviderSettings, context: ChangeContext) async throws -> AppleProviderConfig {
        let valid = try settings.validated()
        let at = now().unixSeconds
        let sealed = valid.privateKeyDER.map { masterKey.seal($0, context: Self.sealContext(realmID)) }
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            let before = try Self.load(db, realmID: realmID)
            let keyConfigured: Bool
            switch valid.privateKey {
            case .keep: keyConfigured = before?.privateKeyConfigured ?? false
            case .remove: keyConfigured = false
            case .replace: keyConfigured = true
            }
            let after = AppleProviderConfig(
                realmId: realmID, enabled: valid.enabled, clientId: valid.clientId, audiences: valid.audiences,
                teamId: valid.teamId, keyId: valid.keyId, privateKeyConfigured: keyConfigured, scopes: valid.scopes,
                returnUrls: valid.returnUrls, createdAt: before?.createdAt ?? at, updatedAt: at)
            try db.execute("""
                INSERT INTO apple_providers (realm_id, enabled, client_id, audiences, team_id, key_id, private_key,
                    scopes, return_urls, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (realm_id) DO UPDATE SET enabled = excluded.enabled, client_id = excluded.client_id,
                    audiences = excluded.audiences, team_id = excluded.team_id, key_id = excluded.key_id,
                    scopes = excluded.scopes, return_urls = excluded.return_urls, updated_at = excluded.updated_at
                """,
                .text(realmID), SQLValue(after.enabled), .text(after.clientId), .text(JSONColumn.encode(after.audiences)),
                .optional(after.teamId), .optional(after.keyId), sealed.map(SQLValue.blob) ?? .null,
                .text(JSONColumn.encode(after.scopes)), .text(JSONColumn.encode(after.returnUrls)),
                .integer(after.createdAt), .integer(at))
            switch valid.privateKey {
            case .keep: break
            case .remove: try db.execute("UPDATE apple_providers SET private_key = NULL WHERE realm_id = ?", .text(realmID))
            case .replace:
                try db.execute("UPDATE apple_providers SET private_key = ? WHERE realm_id = ?",
                               sealed.map(SQLValue.blob) ?? .null, .text(realmID))
            }
            try RealmSettingsVersion.bump(db, realmID: realmID)
            var changes = AuditDiff.changes(before: before, after: after)
            if case .replace = valid.privateKey { changes["privateKey"] = .redactedSecret }
            try AuditLog.record(db, at: at, context: context, action: before == nil ? "provider.apple.create" : "provider.apple.update",
                                target: Self.target(realmID), realmID: realmID, changes: changes)
            return after
        }
    }

    /// Removes the realm's Apple provider. Throws `notFound` (realm or provider).
    public func delete(realmID: String, context: ChangeContext) async throws {
        let at = now().unixSeconds
        try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            guard let before = try Self.load(db, realmID: realmID) else { throw RealmsError.notFound("Apple provider") }
            try db.execute("DELETE FROM apple_providers WHERE realm_id = ?", .text(realmID))
            try RealmSettingsVersion.bump(db, realmID: realmID)
            try AuditLog.record(db, at: at, context: context, action: "provider.apple.delete", target: Self.target(realmID),
                                realmID: realmID, changes: AuditDiff.changes(before: before, after: nil))
        }
    }

    /// The realm's decrypted Apple private key (for the client secret of Apple's code
    /// exchange), or nil when none is configured.
    public func privateKey(realmID: String) async throws -> PrivateKey? {
        let sealed = try await database.read { db in
            try db.queryOne("SELECT private_key FROM apple_providers WHERE realm_id = ?", .text(realmID))?
                .optionalBytes("private_key")
        }
        guard let sealed else { return nil }
        let der = try masterKey.open(sealed, context: Self.sealContext(realmID))
        return try PrivateKey(pkcs8DER: der)
    }

    // MARK: - Rows

    static func sealContext(_ realmID: String) -> String { "apple-private-key:\(realmID)" }

    static func target(_ realmID: String) -> String { "realms/\(realmID)/providers/apple" }

    /// Loads a realm's provider inside a transaction.
    public static func load(_ db: any SQLExecutor, realmID: String) throws -> AppleProviderConfig? {
        guard let row = try db.queryOne("SELECT * FROM apple_providers WHERE realm_id = ?", .text(realmID)) else { return nil }
        return AppleProviderConfig(
            realmId: try row.string("realm_id"), enabled: try row.bool("enabled"), clientId: try row.string("client_id"),
            audiences: try JSONColumn.strings(row, "audiences"), teamId: try row.optionalString("team_id"),
            keyId: try row.optionalString("key_id"), privateKeyConfigured: try row.optionalBytes("private_key") != nil,
            scopes: try JSONColumn.strings(row, "scopes"),
            returnUrls: try JSONColumn.strings(row, "return_urls"), createdAt: try row.int("created_at"),
            updatedAt: try row.int("updated_at"))
    }
}

import Foundation
import Storage

/// Stores each realm's Google provider. It holds no secret: Google ID tokens are verified with
/// Google's public keys, so the configuration is only which client ids (and which hosted
/// domain) a realm accepts.
public struct GoogleProviderStore: Sendable {
    private let database: any Database
    private let now: @Sendable () -> Date

    public init(database: any Database, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    /// The realm's Google provider, or nil when none is configured.
    public func config(realmID: String) async throws -> GoogleProviderConfig? {
        try await database.read { db in try Self.load(db, realmID: realmID) }
    }

    /// Creates or replaces the realm's Google provider. Throws `notFound` (realm) or `invalidInput`.
    public func put(realmID: String, settings: GoogleProviderSettings, context: ChangeContext) async throws
        -> GoogleProviderConfig {
        let valid = try settings.validated()
        let at = now().unixSeconds
        return try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            let before = try Self.load(db, realmID: realmID)
            let after = GoogleProviderConfig(realmId: realmID, enabled: valid.enabled, clientIds: valid.clientIds,
                                             hostedDomain: valid.hostedDomain, createdAt: before?.createdAt ?? at,
                                             updatedAt: at)
            try db.execute("""
                INSERT INTO google_providers (realm_id, enabled, client_ids, hosted_domain, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (realm_id) DO UPDATE SET enabled = excluded.enabled, client_ids = excluded.client_ids,
                    hosted_domain = excluded.hosted_domain, updated_at = excluded.updated_at
                """,
                .text(realmID), SQLValue(after.enabled), .text(JSONColumn.encode(after.clientIds)),
                .optional(after.hostedDomain), .integer(after.createdAt), .integer(at))
            // Logins remember a realm's settings while its version stands; a provider change must end that.
            try RealmSettingsVersion.bump(db, realmID: realmID)
            try AuditLog.record(db, at: at, context: context,
                                action: before == nil ? "provider.google.create" : "provider.google.update",
                                target: Self.target(realmID), realmID: realmID,
                                changes: AuditDiff.changes(before: before, after: after))
            return after
        }
    }

    /// Removes the realm's Google provider. Throws `notFound` (realm or provider).
    public func delete(realmID: String, context: ChangeContext) async throws {
        let at = now().unixSeconds
        try await database.write { db in
            try RealmStore.requireRealm(db, id: realmID)
            guard let before = try Self.load(db, realmID: realmID) else { throw RealmsError.notFound("Google provider") }
            try db.execute("DELETE FROM google_providers WHERE realm_id = ?", .text(realmID))
            try RealmSettingsVersion.bump(db, realmID: realmID)
            try AuditLog.record(db, at: at, context: context, action: "provider.google.delete", target: Self.target(realmID),
                                realmID: realmID, changes: AuditDiff.changes(before: before, after: nil))
        }
    }

    // MARK: - Rows

    static func target(_ realmID: String) -> String { "realms/\(realmID)/providers/google" }

    /// Loads a realm's provider inside a transaction: the read a Google login makes before it
    /// verifies a token (the accepted audiences and hosted domain).
    public static func load(_ db: any SQLExecutor, realmID: String) throws -> GoogleProviderConfig? {
        guard let row = try db.queryOne("SELECT * FROM google_providers WHERE realm_id = ?", .text(realmID)) else { return nil }
        return GoogleProviderConfig(
            realmId: try row.string("realm_id"), enabled: try row.bool("enabled"),
            clientIds: try JSONColumn.strings(row, "client_ids"), hostedDomain: try row.optionalString("hosted_domain"),
            createdAt: try row.int("created_at"), updatedAt: try row.int("updated_at"))
    }
}

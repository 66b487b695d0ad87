import JOSE
import Storage

/// A stamp of everything a login reads about a realm before it verifies a token: the realm's
/// own row, its providers (Apple, Google) and its client apps — and of the realm's active
/// signing key, which its sessions' tokens are signed with. Every change to those rows sets a
/// new random stamp on the realm in the same transaction, so a node that keeps them in memory
/// (the login's `LoginContextCache`, TokenIssuer's remembered active keys) learns inside its own
/// write transaction, with one primary-key read, whether what it relies on is still what is
/// stored — on every node sharing the database, with no messages between them.
///
/// Random rather than counted: a realm deleted and created again under the same id must not
/// get back a stamp a node remembers from the first one.
public enum RealmSettingsVersion {
    /// The realm's current stamp, nil when the realm does not exist.
    public static func current(_ db: any SQLExecutor, realmID: String) throws -> String? {
        let statement = currentStatement(realmID: realmID)
        return try current(fromRows: try db.query(statement.sql, statement.parameters))
    }

    /// What `current(_:realmID:)` runs, for a body that sends it with other statements in one
    /// round trip (`SQLExecutor.queryBatch`); decode its rows with `current(fromRows:)`.
    public static func currentStatement(realmID: String) -> (sql: String, parameters: [SQLValue]) {
        ("SELECT settings_version FROM realms WHERE id = ?", [.text(realmID)])
    }

    /// The stamp in the rows of `currentStatement(realmID:)`.
    public static func current(fromRows rows: [Row]) throws -> String? {
        try rows.first?.string("settings_version")
    }

    /// Marks the realm's login settings (or its active signing key) changed; call it in the
    /// transaction that changes them.
    public static func bump(_ db: any SQLExecutor, realmID: String) throws {
        try db.execute("UPDATE realms SET settings_version = ? WHERE id = ?", .text(fresh()), .text(realmID))
    }

    /// A stamp no realm had before.
    static func fresh() -> String { SecureRandom.token(byteCount: 12) }
}

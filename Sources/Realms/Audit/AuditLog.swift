import Foundation
import Storage

/// The append-only record of admin changes. Stores write entries inside the transaction of
/// the change itself, so a change and its audit entry commit (or roll back) together.
/// An entry is filed under a realm (`realm_id`) while that realm exists: deleting a realm files
/// its entries, the delete's own included, under no realm (`fileUnderNoRealm`), so all-realms
/// tokens keep the history (each target still names the realm) while a token scoped to a new
/// realm created under the same id sees none of the old tenant's entries.
public struct AuditLog: Sendable {
    private let database: any Database

    public init(database: any Database) {
        self.database = database
    }

    /// Appends an entry within the caller's write transaction.
    public static func record(_ executor: any SQLExecutor, at: Int64, context: ChangeContext, action: String,
                              target: String, realmID: String?, changes: [String: FieldChange]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(changes), as: UTF8.self)
        try executor.execute(
            "INSERT INTO admin_audit (at, actor, action, target, realm_id, reason, changes) VALUES (?, ?, ?, ?, ?, ?, ?)",
            .integer(at), .text(context.actor), .text(action), .text(target), .optional(realmID),
            .optional(context.reason), .text(json))
    }

    /// Files every entry of `realmID` under no realm, within the realm delete's write
    /// transaction: a realm id can be used again, and the entries (actors, reasons, diffs) of
    /// the deleted tenant must not show in the new realm's audit. Only all-realms tokens see
    /// entries of no realm; the targets still name the realm.
    public static func fileUnderNoRealm(_ executor: any SQLExecutor, realmID: String) throws {
        try executor.execute("UPDATE admin_audit SET realm_id = NULL WHERE realm_id = ?", .text(realmID))
    }

    /// Entries newest first, optionally filtered.
    public func list(filter: AuditFilter = AuditFilter(), page: PageRequest = .first) async throws -> Page<AuditEntry> {
        let before = try page.cursor.map { cursor throws(RealmsError) in try ListCursor.decodeInteger(cursor, list: "audit") }
        return try await database.read { db in
            var clauses: [String] = []
            var parameters: [SQLValue] = []
            if let before { clauses.append("id < ?"); parameters.append(.integer(before)) }
            if let actor = filter.actor { clauses.append("actor = ?"); parameters.append(.text(actor)) }
            if let action = filter.action { clauses.append("action = ?"); parameters.append(.text(action)) }
            if let realmID = filter.realmID { clauses.append("realm_id = ?"); parameters.append(.text(realmID)) }
            if let target = filter.target { clauses.append("target = ?"); parameters.append(.text(target)) }
            if let only = filter.onlyRealmIDs {
                // Entries of no realm (admin tokens) are outside every realm scope; `IN ()` is
                // not valid SQL, so an empty scope matches nothing explicitly.
                clauses.append(only.isEmpty ? "1 = 0" : "realm_id IN (\(Array(repeating: "?", count: only.count).joined(separator: ", ")))")
                parameters += only.sorted().map(SQLValue.text)
            }
            let whereClause = clauses.isEmpty ? "" : "WHERE " + clauses.joined(separator: " AND ")
            parameters.append(.integer(Int64(page.limit + 1)))
            let rows = try db.query(
                "SELECT id, at, actor, action, target, reason, changes FROM admin_audit \(whereClause) ORDER BY id DESC LIMIT ?",
                parameters)
            let entries = try rows.prefix(page.limit).map { row in
                AuditEntry(id: try row.int("id"), at: try row.int("at"), actor: try row.string("actor"),
                           action: try row.string("action"), target: try row.string("target"),
                           reason: try row.optionalString("reason"),
                           changes: try Self.changes(row))
            }
            let next = rows.count > page.limit ? entries.last.map { ListCursor.encode(list: "audit", key: $0.id) } : nil
            return Page(items: entries, nextCursor: next)
        }
    }

    /// An entry's stored `changes`. Herald writes them itself, so text that does not decode is
    /// damaged stored data: it throws (`typeMismatch`, naming the column, never the value)
    /// rather than showing the entry as one that changed nothing.
    static func changes(_ row: Row) throws -> [String: FieldChange] {
        do {
            return try JSONDecoder().decode([String: FieldChange].self, from: Data(try row.string("changes").utf8))
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(code: .typeMismatch, message: "column 'changes' holds unreadable JSON, expected an object of field changes")
        }
    }
}

/// Optional filters of the audit list; all given filters must match.
public struct AuditFilter: Sendable, Equatable {
    public var actor: String?
    public var action: String?
    public var realmID: String?
    public var target: String?
    /// Only entries of these realms (a realm-scoped admin token's view); nil for every entry.
    public var onlyRealmIDs: Set<String>?

    public init(actor: String? = nil, action: String? = nil, realmID: String? = nil, target: String? = nil,
                onlyRealmIDs: Set<String>? = nil) {
        self.actor = actor
        self.action = action
        self.realmID = realmID
        self.target = target
        self.onlyRealmIDs = onlyRealmIDs
    }
}

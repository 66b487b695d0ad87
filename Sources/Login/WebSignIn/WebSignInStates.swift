import Foundation
import JOSE
import Storage
import Synchronization

/// The server-side state of a provider's web sign-in: made when the browser starts, taken once
/// when the provider's answer comes back (10 minutes), and only by the browser that started it
/// (login CSRF). Only SHA-256s of the state and of the browser's binding (a cookie) are stored;
/// the row holds the client, the third-party handle and where the app wants the result. Each
/// provider keeps its rows in its own table (`Table`), created by its own migrations.
public final class WebSignInStates: Sendable {
    /// The table of one provider's states; all share one shape (see `columns`).
    public struct Table: Sendable {
        let name: String
        /// Apple's web flow (`apple-web` migrations, HeraldApple).
        public static let apple = Table(name: "apple_web_states")
        /// Google's sign-in button (`google-web` migrations, HeraldGoogle).
        public static let google = Table(name: "google_web_states")
    }

    /// The columns every provider's table has (its migration creates them; `nonce` may be
    /// absent where the provider's answer carries the state itself, as Google's does).
    public static func createTable(_ table: Table) -> [String] {
        [
            """
            CREATE TABLE \(table.name) (
                state_hash BLOB PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                downstream_state TEXT,
                return_to TEXT,
                nonce TEXT,
                expires_at INTEGER NOT NULL,
                browser_hash BLOB
            )
            """,
            "CREATE INDEX \(table.name)_expiry ON \(table.name) (expires_at)",
        ]
    }

    /// How long a browser may take at the provider.
    public static let lifetimeSeconds: Int64 = 600

    /// A web sign-in waiting for the provider's answer.
    public struct Pending: Sendable, Equatable {
        public let clientID: String
        public let downstreamState: String?
        public let returnTo: String?
        /// The raw nonce Herald made, when the provider's answer does not carry the state itself
        /// (Apple was sent its SHA-256, as a native app does); nil otherwise.
        public let nonce: String?

        public init(clientID: String, downstreamState: String?, returnTo: String?, nonce: String?) {
            self.clientID = clientID
            self.downstreamState = downstreamState
            self.returnTo = returnTo
            self.nonce = nonce
        }
    }

    private let table: Table
    private let database: any Database
    private let now: @Sendable () -> Date
    private let lastPurge = Mutex<Int64>(0)

    public init(_ table: Table, database: any Database, now: @escaping @Sendable () -> Date) {
        self.table = table
        self.database = database
        self.now = now
    }

    /// Records `pending` for the browser holding `browserBinding` and returns the state to send
    /// to the provider (256 random bits).
    public func begin(realmID: String, _ pending: Pending, browserBinding: String) async throws -> String {
        let state = SecureRandom.token(byteCount: 32)
        let at = now().unixSeconds
        let purge = lastPurge.withLock { last -> Bool in
            guard at - last >= 60 else { return false }
            last = at
            return true
        }
        let table = table.name
        try await database.write { db in
            if purge { try db.execute("DELETE FROM \(table) WHERE expires_at <= ?", .integer(at)) }
            try db.execute("""
                INSERT INTO \(table) (state_hash, realm_id, client_id, downstream_state, return_to, nonce,
                    expires_at, browser_hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, .blob(SHA256.hash(Array(state.utf8))), .text(realmID), .text(pending.clientID),
                .optional(pending.downstreamState), .optional(pending.returnTo), .optional(pending.nonce),
                .integer(at + Self.lifetimeSeconds), .blob(SHA256.hash(Array(browserBinding.utf8))))
        }
        return state
    }

    /// Takes the pending sign-in of `state` in the realm: once, before it expires, and only for
    /// the browser that began it; nil otherwise. Another browser's attempt leaves the state
    /// for its own browser (the hashes are compared by the index lookup: a state is 256
    /// random bits, so the lookup's timing reveals nothing usable).
    public func take(realmID: String, state: String, browserBinding: String) async throws -> Pending? {
        guard !state.isEmpty, state.utf8.count <= 128 else { return nil }
        let at = now().unixSeconds
        let table = table.name
        return try await database.write { db in
            try db.queryOne("""
                DELETE FROM \(table)
                WHERE state_hash = ? AND realm_id = ? AND browser_hash = ? AND expires_at > ?
                RETURNING client_id, downstream_state, return_to, nonce
                """, .blob(SHA256.hash(Array(state.utf8))), .text(realmID),
                .blob(SHA256.hash(Array(browserBinding.utf8))), .integer(at)).map { row in
                Pending(clientID: try row.string("client_id"), downstreamState: try row.optionalString("downstream_state"),
                        returnTo: try row.optionalString("return_to"), nonce: try row.optionalString("nonce"))
            }
        }
    }
}

import Foundation
import JOSE
import Storage
import Synchronization

/// The server-side `state` of Apple's web flow: made when the browser leaves for Apple, taken
/// once when Apple sends it back (10 minutes), and only by the browser that started it. Only
/// SHA-256s of the state and of the browser's binding (a cookie) are stored; the row holds the
/// client, the third-party handle, where the app wants the result, and the nonce Herald made.
public final class AppleWebStates: Sendable {
    /// The `apple-web` module's schema.
    public static let migrations: [Migration] = [
        Migration(module: "apple-web", version: 1, name: "web flow states", statements: [
            """
            CREATE TABLE apple_web_states (
                state_hash BLOB PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                downstream_state TEXT,
                return_to TEXT,
                nonce TEXT NOT NULL,
                expires_at INTEGER NOT NULL
            )
            """,
            "CREATE INDEX apple_web_states_expiry ON apple_web_states (expires_at)",
        ]),
        // Login CSRF: a state is taken only with the binding of the browser that started it.
        // Rows from before have none and can no longer be taken (they live 10 minutes).
        Migration(module: "apple-web", version: 2, name: "browser binding", statements: [
            "ALTER TABLE apple_web_states ADD COLUMN browser_hash BLOB",
        ]),
    ]

    /// How long a browser may take at Apple.
    public static let lifetimeSeconds: Int64 = 600

    /// A web login waiting for Apple's answer.
    public struct Pending: Sendable, Equatable {
        public let clientID: String
        public let downstreamState: String?
        public let returnTo: String?
        /// The raw nonce; Apple was sent its SHA-256 (hex), as a native app does.
        public let nonce: String
    }

    private let database: any Database
    private let now: @Sendable () -> Date
    private let lastPurge = Mutex<Int64>(0)

    public init(database: any Database, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    /// Records `pending` for the browser holding `browserBinding` and returns the `state` to
    /// send to Apple.
    public func begin(realmID: String, _ pending: Pending, browserBinding: String) async throws -> String {
        let state = SecureRandom.token(byteCount: 32)
        let at = now().unixSeconds
        let purge = lastPurge.withLock { last -> Bool in
            guard at - last >= 60 else { return false }
            last = at
            return true
        }
        try await database.write { db in
            if purge { try db.execute("DELETE FROM apple_web_states WHERE expires_at <= ?", .integer(at)) }
            try db.execute("""
                INSERT INTO apple_web_states (state_hash, realm_id, client_id, downstream_state, return_to, nonce,
                    expires_at, browser_hash)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, .blob(SHA256.hash(Array(state.utf8))), .text(realmID), .text(pending.clientID),
                .optional(pending.downstreamState), .optional(pending.returnTo), .text(pending.nonce),
                .integer(at + Self.lifetimeSeconds), .blob(SHA256.hash(Array(browserBinding.utf8))))
        }
        return state
    }

    /// Takes the pending login of `state` in the realm: once, before it expires, and only for
    /// the browser that began it; nil otherwise. Another browser's attempt leaves the state
    /// for its own browser (the hashes are compared by the index lookup: a state is 256
    /// random bits, so the lookup's timing reveals nothing usable).
    public func take(realmID: String, state: String, browserBinding: String) async throws -> Pending? {
        guard !state.isEmpty, state.utf8.count <= 128 else { return nil }
        let at = now().unixSeconds
        return try await database.write { db in
            try db.queryOne("""
                DELETE FROM apple_web_states
                WHERE state_hash = ? AND realm_id = ? AND browser_hash = ? AND expires_at > ?
                RETURNING client_id, downstream_state, return_to, nonce
                """, .blob(SHA256.hash(Array(state.utf8))), .text(realmID),
                .blob(SHA256.hash(Array(browserBinding.utf8))), .integer(at)).map { row in
                Pending(clientID: try row.string("client_id"), downstreamState: try row.optionalString("downstream_state"),
                        returnTo: try row.optionalString("return_to"), nonce: try row.string("nonce"))
            }
        }
    }
}

import Foundation
import JOSE
import Storage
import Synchronization

/// The server-side `state` of Apple's web flow: made when the browser leaves for Apple, taken
/// once when Apple sends it back (10 minutes). Only its SHA-256 is stored; the row holds the
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

    /// Records `pending` and returns the `state` to send to Apple.
    public func begin(realmID: String, _ pending: Pending) async throws -> String {
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
                INSERT INTO apple_web_states (state_hash, realm_id, client_id, downstream_state, return_to, nonce, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """, .blob(SHA256.hash(Array(state.utf8))), .text(realmID), .text(pending.clientID),
                .optional(pending.downstreamState), .optional(pending.returnTo), .text(pending.nonce),
                .integer(at + Self.lifetimeSeconds))
        }
        return state
    }

    /// Takes the pending login of `state` in the realm: once, before it expires; nil otherwise.
    public func take(realmID: String, state: String) async throws -> Pending? {
        guard !state.isEmpty, state.utf8.count <= 128 else { return nil }
        let at = now().unixSeconds
        return try await database.write { db in
            try db.queryOne("""
                DELETE FROM apple_web_states WHERE state_hash = ? AND realm_id = ? AND expires_at > ?
                RETURNING client_id, downstream_state, return_to, nonce
                """, .blob(SHA256.hash(Array(state.utf8))), .text(realmID), .integer(at)).map { row in
                Pending(clientID: try row.string("client_id"), downstreamState: try row.optionalString("downstream_state"),
                        returnTo: try row.optionalString("return_to"), nonce: try row.string("nonce"))
            }
        }
    }
}

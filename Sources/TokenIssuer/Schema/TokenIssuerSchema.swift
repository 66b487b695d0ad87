import Storage

/// The TokenIssuer module's tables, as forward-only migrations of module "tokens". They
/// reference `realms` and `accounts` (Realms' tables) in foreign keys (on PostgreSQL, for the
/// tables every login writes, in cascade triggers: v7, v9), so that deleting a realm or an
/// account removes what hangs off it: schema references, not reads. The one read of a
/// Realms table is v4's one-time backfill of `client_instance` from `client_apps.instance_id`,
/// kept as it ran (a migration is history: it is never edited). Apply them after
/// `RealmsSchema.migrations`. TokenIssuer's code reads Realms' tables only through what Realms
/// exports (`AccountStanding`, `ClientStanding`, `RealmStore.longestAccessTokenTTL`).
public enum TokenIssuerSchema {
    public static let migrations: [Migration] = [
        Migration(module: "tokens", version: 1, name: "signing keys", statements: [
            // private_key: PKCS#8 DER sealed under the master key (context binds realm and kid).
            // Retired keys stay published until publish_until, so tokens they signed verify.
            """
            CREATE TABLE signing_keys (
                kid TEXT PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                algorithm TEXT NOT NULL,
                private_key BLOB NOT NULL,
                public_jwk TEXT NOT NULL,
                status TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                retired_at INTEGER,
                publish_until INTEGER
            )
            """,
            "CREATE INDEX signing_keys_realm ON signing_keys (realm_id, status)",
        ]),
        Migration(module: "tokens", version: 2, name: "sessions and refresh tokens", statements: [
            // A session is one refresh family: bound to its client (and IP when ip_binding),
            // with an absolute expiry. Access tokens carry its id (`sid`), so revoking it
            // (revoked_at) ends them at once; validation reads this row by primary key.
            """
            CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                scope TEXT NOT NULL,
                client_ip TEXT NOT NULL,
                ip_binding INTEGER NOT NULL,
                auth_time INTEGER NOT NULL,
                access_token_ttl INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                last_refreshed_at INTEGER,
                revoked_at INTEGER,
                revoke_reason TEXT
            )
            """,
            "CREATE INDEX sessions_account ON sessions (realm_id, account_id, created_at)",
            // Only SHA-256 of each refresh token is stored; rotated_at marks a used token, whose
            // second presentation revokes the family.
            """
            CREATE TABLE refresh_tokens (
                token_hash BLOB PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                created_at INTEGER NOT NULL,
                rotated_at INTEGER
            )
            """,
            "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id)",
        ]),
        // EndedSessionPurge finds ended sessions by these, without scanning the table.
        Migration(module: "tokens", version: 3, name: "session end indexes", statements: [
            "CREATE INDEX sessions_expires ON sessions (expires_at)",
            "CREATE INDEX sessions_revoked ON sessions (revoked_at)",
        ]),
        // A session is bound to the registration of its client (client_apps.instance_id, realms
        // v2), so deleting a client and creating its id again does not revive its sessions. A
        // session of before this migration is bound to the client row of its id that existed
        // when it was created; one older than that row belonged to an earlier registration and
        // stays unbound ('' matches no client). sessions_client lets disabling or deleting a
        // client revoke its sessions without scanning the table.
        Migration(module: "tokens", version: 4, name: "sessions bound to client instances", statements: [
            "ALTER TABLE sessions ADD COLUMN client_instance TEXT NOT NULL DEFAULT ''",
            """
            UPDATE sessions SET client_instance = COALESCE((
                SELECT c.instance_id FROM client_apps c
                WHERE c.realm_id = sessions.realm_id AND c.client_id = sessions.client_id
                    AND c.created_at <= sessions.created_at), '')
            """,
            "CREATE INDEX sessions_client ON sessions (realm_id, client_id)",
        ]),
        // Idle timeout (issue #16): refresh_idle_ttl is the timeout the session was started
        // with (realm or client refreshIdleTTL), idle_expires_at the deadline it sets from the
        // last use (created_at, then last_refreshed_at), moved on by every rotation. NULL in
        // both: no idle timeout, as for every session of before this migration. The index lets
        // EndedSessionPurge find idle-ended sessions without scanning the table.
        Migration(module: "tokens", version: 5, name: "session idle timeout", statements: [
            "ALTER TABLE sessions ADD COLUMN refresh_idle_ttl INTEGER",
            "ALTER TABLE sessions ADD COLUMN idle_expires_at INTEGER",
            "CREATE INDEX sessions_idle_expires ON sessions (idle_expires_at)",
        ]),
        // A session starts unrevoked, and without an idle deadline unless its client has one, so
        // the two purge indexes above took an entry (a B-tree insert in the login's write) for
        // a NULL that EndedSessionPurge never looks up. Partial, they hold only the sessions the
        // purge can find: `revoked_at < ?` implies `revoked_at IS NOT NULL` to both SQLite's and
        // PostgreSQL's planner.
        Migration(module: "tokens", version: 6, name: "partial session end indexes", statements: [
            "DROP INDEX sessions_revoked",
            "CREATE INDEX sessions_revoked ON sessions (revoked_at) WHERE revoked_at IS NOT NULL",
            "DROP INDEX sessions_idle_expires",
            "CREATE INDEX sessions_idle_expires ON sessions (idle_expires_at) WHERE idle_expires_at IS NOT NULL",
        ]),
        // Every login inserts a session, and on PostgreSQL the realm foreign key's check takes a
        // FOR KEY SHARE lock on the one `realms` row all of a realm's logins share (multixacts
        // under load). TokenIssuer guarantees the relation itself: a session is only started
        // for an account of its realm (`sessions.realm_id` is the account's), and the account
        // foreign key, kept, still removes the session (and its refresh tokens) when the
        // account goes, including by the realm's cascade. SQLite's foreign-key checks take no
        // row locks, and its ALTER TABLE cannot drop one: there the constraint stays.
        Migration(module: "tokens", version: 7, name: "sessions without a realm foreign key", statements: [
            "ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_realm_id_fkey",
        ], onlyOn: .postgres),
        // Refresh tokens as `selector.verifier` (`RefreshToken`): a new token's row is keyed by
        // its time-ordered selector (in token_hash, 16 bytes) and keeps SHA-256 of its verifier
        // here, so each new token lands at the right edge of the key's index. Rows of before
        // (SHA-256 of the whole token, 32 bytes) keep NULL, and their tokens keep working.
        Migration(module: "tokens", version: 8, name: "refresh token verifiers", statements: [
            "ALTER TABLE refresh_tokens ADD COLUMN verifier_hash BLOB",
        ]),
        // On PostgreSQL a foreign key's check on every insert is a query and a FOR KEY SHARE lock
        // on the parent row: a login's session locked its account's row (an extra WAL record,
        // and a multixact when two logins of one account overlap), and each refresh token its
        // session's. TokenIssuer guarantees both relations itself: a session is only started
        // for an account read in the same transaction, a refresh token only for a session it
        // has just started or read. What the keys still did, the cascades, become statement
        // triggers that delete what hung off the deleted rows (a realm's deletion reaches the
        // sessions through its cascade to `accounts`). A session that a racing transaction
        // leaves behind a deleted account is inert: every use joins `accounts`
        // (`AccountStanding`), and the purge removes it once it ends. SQLite checks a foreign
        // key with a B-tree read and no lock, and cannot drop one: there they stay.
        Migration(module: "tokens", version: 9, name: "hot foreign keys as cascade triggers", statements: [
            "ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_account_id_fkey",
            "ALTER TABLE refresh_tokens DROP CONSTRAINT IF EXISTS refresh_tokens_session_id_fkey",
            """
            CREATE FUNCTION tokens_delete_sessions_of_accounts() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM sessions s USING deleted_accounts d WHERE s.realm_id = d.realm_id AND s.account_id = d.id;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER accounts_delete_sessions AFTER DELETE ON accounts
                REFERENCING OLD TABLE AS deleted_accounts
                FOR EACH STATEMENT EXECUTE FUNCTION tokens_delete_sessions_of_accounts()
            """,
            """
            CREATE FUNCTION tokens_delete_refresh_tokens_of_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM refresh_tokens r USING deleted_sessions d WHERE r.session_id = d.id;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER sessions_delete_refresh_tokens AFTER DELETE ON sessions
                REFERENCING OLD TABLE AS deleted_sessions
                FOR EACH STATEMENT EXECUTE FUNCTION tokens_delete_refresh_tokens_of_sessions()
            """,
        ], onlyOn: .postgres),
        // On SQLite refresh_tokens was a rowid table with a BLOB primary key, so each insert
        // wrote two B-trees (the table, by rowid, and the key's index) and each lookup by token
        // searched both. `WITHOUT ROWID` keeps its small rows in their key's B-tree: one tree
        // fewer per login and per refresh, one search per lookup (issue #39). SQLite cannot
        // change that in place, so the table is rebuilt with every column and index as v2–v8
        // left it (it references sessions and nothing references it). `sessions` stays a rowid
        // table: rebuilt the same way it made each login write about 2 KB more (its rows are
        // too wide for keys that interior pages repeat; RESULTS.md). PostgreSQL's heap tables
        // have no rowid: nothing runs there.
        Migration(module: "tokens", version: 10, name: "refresh tokens without rowid", statements: [
            """
            CREATE TABLE refresh_tokens_v10 (
                token_hash BLOB PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                created_at INTEGER NOT NULL,
                rotated_at INTEGER,
                verifier_hash BLOB
            ) WITHOUT ROWID
            """,
            """
            INSERT INTO refresh_tokens_v10 (token_hash, session_id, created_at, rotated_at, verifier_hash)
            SELECT token_hash, session_id, created_at, rotated_at, verifier_hash FROM refresh_tokens
            """,
            "DROP TABLE refresh_tokens",
            "ALTER TABLE refresh_tokens_v10 RENAME TO refresh_tokens",
            "CREATE INDEX refresh_tokens_session ON refresh_tokens (session_id)",
        ], onlyOn: .sqlite),
    ]
}

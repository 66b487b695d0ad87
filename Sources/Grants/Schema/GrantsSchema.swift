import Storage

/// The Grants module's tables, as forward-only migrations of module "grants". They reference
/// `realms`, so apply them after `RealmsSchema.migrations`.
public enum GrantsSchema {
    public static let migrations: [Migration] = [
        Migration(module: "grants", version: 1, name: "pending authorizations and codes", statements: [
            // A third-party backend's /authorize request, waiting for the user's native login.
            // Keyed by (realm, state) so branch B found it from the state alone (until version 2;
            // keyed by (realm, client, state) since version 3).
            """
            CREATE TABLE pending_authorizations (
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                state TEXT NOT NULL,
                client_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                scope TEXT NOT NULL,
                nonce TEXT,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                consumed_at INTEGER,
                PRIMARY KEY (realm_id, state)
            )
            """,
            "CREATE INDEX pending_authorizations_expiry ON pending_authorizations (expires_at)",
            // One-time codes, stored only as SHA-256 hashes. session_id records what the first
            // redemption issued so a replay can revoke it. reuse_detected covered a replay that
            // landed before the session id was recorded; since the session id commits with the
            // redemption (one transaction) it is no longer written.
            """
            CREATE TABLE authorization_codes (
                code_hash BLOB PRIMARY KEY,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                scope TEXT NOT NULL,
                nonce TEXT,
                account_id TEXT NOT NULL,
                auth_time INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                used_at INTEGER,
                session_id TEXT,
                reuse_detected INTEGER NOT NULL DEFAULT 0
            )
            """,
            "CREATE INDEX authorization_codes_expiry ON authorization_codes (expires_at)",
        ]),
        Migration(module: "grants", version: 2, name: "downstream state handles and client registrations", statements: [
            // The app completes a pending authorization with a Herald-generated handle instead of
            // the backend's own `state`, which may be guessable and which the backend and browser
            // also know. Stored only as its SHA-256 hash, like codes. Rows written before this
            // migration have none and cannot be completed (they expire within ten minutes).
            "ALTER TABLE pending_authorizations ADD COLUMN handle_hash BLOB",
            "CREATE UNIQUE INDEX pending_authorizations_handle ON pending_authorizations (handle_hash)",
            // The client registration (`client_apps.instance_id`) each was made for, so a client
            // deleted and created again under the same id neither completes nor redeems them.
            // Rows from before this migration have none and are refused (they live minutes).
            "ALTER TABLE pending_authorizations ADD COLUMN client_instance TEXT",
            "ALTER TABLE authorization_codes ADD COLUMN client_instance TEXT",
        ]),
        Migration(module: "grants", version: 3, name: "pending authorizations keyed by client", statements: [
            // A backend's `state` is its own and may be predictable: keyed by (realm, state),
            // any client of the realm could claim another's state first, and hold it pending.
            // Keyed by (realm, client, state), each client's states are its own. Branch B finds
            // a row by its handle (unique below), not by the state. SQLite cannot change a
            // primary key, so the table is rebuilt under a temporary name and renamed; the
            // indexes go with the old table and are created again (their names are schema-wide
            // on PostgreSQL, so only after the drop).
            """
            CREATE TABLE pending_authorizations_v3 (
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                state TEXT NOT NULL,
                handle_hash BLOB,
                client_instance TEXT,
                redirect_uri TEXT NOT NULL,
                code_challenge TEXT NOT NULL,
                scope TEXT NOT NULL,
                nonce TEXT,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                consumed_at INTEGER,
                PRIMARY KEY (realm_id, client_id, state)
            )
            """,
            """
            INSERT INTO pending_authorizations_v3 (realm_id, client_id, state, handle_hash, client_instance, redirect_uri,
                code_challenge, scope, nonce, created_at, expires_at, consumed_at)
            SELECT realm_id, client_id, state, handle_hash, client_instance, redirect_uri, code_challenge, scope, nonce,
                created_at, expires_at, consumed_at
            FROM pending_authorizations
            """,
            "DROP TABLE pending_authorizations",
            "ALTER TABLE pending_authorizations_v3 RENAME TO pending_authorizations",
            "CREATE INDEX pending_authorizations_expiry ON pending_authorizations (expires_at)",
            "CREATE UNIQUE INDEX pending_authorizations_handle ON pending_authorizations (handle_hash)",
        ]),
        // On PostgreSQL each insert's foreign-key check on `realm_id` is a query and a FOR KEY
        // SHARE lock on the one `realms` row every flow of the realm shares (an /authorize
        // and a branch B login each took one; multixacts when flows overlap). Grants guarantees
        // the relation itself: a pending authorization or code is only written in a
        // transaction that read the realm's settings stamp (`begin(settingsStamp:)`, the
        // login's first round trip). What the keys still did, the cascade on a realm's
        // deletion, becomes a statement trigger on `realms` (Grants already depends on that
        // table; Realms stays unaware of Grants). A row that a racing transaction leaves
        // behind a deleted realm is inert: every use reads the realm first, and the expiry
        // purge removes it within minutes. SQLite checks a foreign key with a B-tree read and
        // no lock, and cannot drop one: there they stay. Version 3 created the pending table
        // as `pending_authorizations_v3`, whose name its constraint kept.
        Migration(module: "grants", version: 4, name: "realm foreign keys as a cascade trigger", statements: [
            "ALTER TABLE pending_authorizations DROP CONSTRAINT IF EXISTS pending_authorizations_v3_realm_id_fkey",
            "ALTER TABLE pending_authorizations DROP CONSTRAINT IF EXISTS pending_authorizations_realm_id_fkey",
            "ALTER TABLE authorization_codes DROP CONSTRAINT IF EXISTS authorization_codes_realm_id_fkey",
            """
            CREATE FUNCTION grants_delete_of_realms() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM pending_authorizations p USING deleted_realms d WHERE p.realm_id = d.id;
                DELETE FROM authorization_codes c USING deleted_realms d WHERE c.realm_id = d.id;
                RETURN NULL;
            END $$
            """,
            """
            CREATE TRIGGER realms_delete_grants AFTER DELETE ON realms
                REFERENCING OLD TABLE AS deleted_realms
                FOR EACH STATEMENT EXECUTE FUNCTION grants_delete_of_realms()
            """,
        ], onlyOn: .postgres),
    ]
}

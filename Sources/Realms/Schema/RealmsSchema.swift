import Storage

/// The Realms module's tables, as forward-only migrations of module "realms".
public enum RealmsSchema {
    /// Apply with `Database.migrate` at start (together with the other modules' migrations).
    /// The security event log's table comes with them: account changes, sessions and logins
    /// write to it in their own transactions, so every database with accounts has it.
    public static var migrations: [Migration] { tables + SecurityEventLog.migrations }

    private static let tables: [Migration] = [
        Migration(module: "realms", version: 1, name: "realms, providers, clients, accounts, admin tokens, audit", statements: [
            """
            CREATE TABLE realms (
                id TEXT PRIMARY KEY,
                display_name TEXT NOT NULL,
                enabled INTEGER NOT NULL,
                registration_enabled INTEGER NOT NULL,
                email_linking TEXT NOT NULL,
                nonce_required INTEGER NOT NULL,
                access_token_ttl INTEGER NOT NULL,
                refresh_token_ttl INTEGER NOT NULL,
                login_url TEXT,
                signing_algorithm TEXT NOT NULL,
                rate_limit_failures INTEGER NOT NULL,
                rate_limit_window INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            )
            """,
            // At most one Apple provider per realm; the private key is sealed (AES-256-GCM).
            """
            CREATE TABLE apple_providers (
                realm_id TEXT PRIMARY KEY REFERENCES realms(id) ON DELETE CASCADE,
                enabled INTEGER NOT NULL,
                client_id TEXT NOT NULL,
                audiences TEXT NOT NULL,
                team_id TEXT,
                key_id TEXT,
                private_key BLOB,
                scopes TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            )
            """,
            // secret_hash: SHA-256 of the client secret; NULL for public clients.
            """
            CREATE TABLE client_apps (
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                client_id TEXT NOT NULL,
                name TEXT NOT NULL,
                first_party INTEGER NOT NULL,
                confidential INTEGER NOT NULL,
                secret_hash BLOB,
                redirect_uris TEXT NOT NULL,
                allowed_scopes TEXT NOT NULL,
                enabled INTEGER NOT NULL,
                ip_binding INTEGER NOT NULL,
                access_token_ttl INTEGER,
                refresh_token_ttl INTEGER,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                PRIMARY KEY (realm_id, client_id)
            )
            """,
            // seq orders account listing (keyset pagination stable under inserts); id is the
            // public random id. A deleted account's email is replaced by a unique placeholder
            // and only the SHA-256 of the original is kept (deleted_email_hash).
            """
            CREATE TABLE accounts (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                email TEXT NOT NULL,
                email_verified INTEGER NOT NULL,
                is_private_email INTEGER NOT NULL,
                given_name TEXT,
                family_name TEXT,
                display_name TEXT,
                status TEXT NOT NULL,
                deleted_email_hash BLOB,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                UNIQUE (realm_id, email)
            )
            """,
            "CREATE INDEX accounts_realm_seq ON accounts (realm_id, seq)",
            // One account per (realm, provider, subject): the key of account resolution.
            """
            CREATE TABLE identities (
                realm_id TEXT NOT NULL REFERENCES realms(id) ON DELETE CASCADE,
                provider TEXT NOT NULL,
                open_id TEXT NOT NULL,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                email TEXT,
                linked_at INTEGER NOT NULL,
                PRIMARY KEY (realm_id, provider, open_id)
            )
            """,
            "CREATE INDEX identities_account ON identities (account_id)",
            "CREATE INDEX identities_realm_provider ON identities (realm_id, provider, account_id)",
            """
            CREATE TABLE admin_tokens (
                name TEXT PRIMARY KEY,
                token_hash BLOB NOT NULL UNIQUE,
                created_at INTEGER NOT NULL
            )
            """,
            // No foreign key to realms: the audit trail outlives the realms it describes.
            """
            CREATE TABLE admin_audit (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                at INTEGER NOT NULL,
                actor TEXT NOT NULL,
                action TEXT NOT NULL,
                target TEXT NOT NULL,
                realm_id TEXT,
                reason TEXT,
                changes TEXT NOT NULL
            )
            """,
            "CREATE INDEX admin_audit_realm ON admin_audit (realm_id, id)",
        ]),
        // instance_id tells registrations of one client id apart (`ClientApp.instanceID`);
        // sessions store the one they were issued for. Rows that exist now are the 'initial'
        // registration of their id; every later create writes a fresh random value.
        Migration(module: "realms", version: 2, name: "client app instances", statements: [
            "ALTER TABLE client_apps ADD COLUMN instance_id TEXT NOT NULL DEFAULT 'initial'",
        ]),
        // Optional idle timeout of sessions (issue #16): the realm's, and a client's override.
        // NULL (every existing row): the realm has none, the client inherits the realm's.
        Migration(module: "realms", version: 3, name: "refresh idle timeout", statements: [
            "ALTER TABLE realms ADD COLUMN refresh_idle_ttl INTEGER",
            "ALTER TABLE client_apps ADD COLUMN refresh_idle_ttl INTEGER",
        ]),
        // Whether Apple forwards mail to the identity's private relay address, as Apple's
        // `email-enabled` / `email-disabled` notifications last said; NULL until one arrives.
        Migration(module: "realms", version: 4, name: "identity email relay state", statements: [
            "ALTER TABLE identities ADD COLUMN email_relay_enabled INTEGER",
        ]),
        // The Apple web flow's registered Return URLs (a JSON array, like audiences).
        Migration(module: "realms", version: 5, name: "apple return urls", statements: [
            "ALTER TABLE apple_providers ADD COLUMN return_urls TEXT NOT NULL DEFAULT '[]'",
        ]),
        // Admin token scope and role (issue #17). The defaults keep every existing token what
        // it was: an admin of all realms (NULL realm_scope). Else a JSON array of realm ids.
        Migration(module: "realms", version: 6, name: "admin token scope and role", statements: [
            "ALTER TABLE admin_tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'admin'",
            "ALTER TABLE admin_tokens ADD COLUMN realm_scope TEXT",
        ]),
        // The stamp of a realm's login settings (`RealmSettingsVersion`), renewed by every change
        // to the realm, its providers or its clients.
        Migration(module: "realms", version: 7, name: "realm settings version", statements: [
            "ALTER TABLE realms ADD COLUMN settings_version TEXT NOT NULL DEFAULT 'initial'",
        ]),
        // At most one Google provider per realm (issue #34): the accepted OAuth client ids (a JSON
        // array, like Apple's audiences) and an optional Workspace domain. No secret.
        Migration(module: "realms", version: 8, name: "google providers", statements: [
            """
            CREATE TABLE google_providers (
                realm_id TEXT PRIMARY KEY REFERENCES realms(id) ON DELETE CASCADE,
                enabled INTEGER NOT NULL,
                client_ids TEXT NOT NULL,
                hosted_domain TEXT,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            )
            """,
        ]),
        // The profile photo's URL a provider gave (Google's `picture`, issue #34); NULL when none
        // did, as for every existing account until its next sign-in brings one.
        Migration(module: "realms", version: 9, name: "account picture url", statements: [
            "ALTER TABLE accounts ADD COLUMN picture_url TEXT",
        ]),
    ]
}

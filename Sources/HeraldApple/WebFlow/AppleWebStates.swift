import Login
import Storage

/// The schema of Apple's web-flow states (`apple_web_states`), kept by `WebSignInStates`.
public enum AppleWebStates {
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
}

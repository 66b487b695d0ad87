import Storage

/// The TokenIssuer module's tables, as forward-only migrations of module "tokens". They
/// reference `realms`, so apply them after `RealmsSchema.migrations`.
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
    ]
}

import JOSE
import Realms

/// The realm's OpenID Provider metadata (OIDC Discovery 1.0, RFC 8414 names).
enum DiscoveryDocument {
    static let scopesSupported = ["openid", "profile", "email"]
    /// Every claim an ID token or userinfo can carry (userinfo adds `given_name`/`family_name`).
    static let claimsSupported = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "email", "email_verified",
                                  "name", "given_name", "family_name", "picture"]

    /// `publishedAlgorithms` are the `alg`s of the realm's published keys, active key first.
    /// After `signingAlgorithm` changes, tokens signed by the retired key stay valid while it
    /// is published, so a client that trusts this list must accept its algorithm too.
    static func document(issuer: String, realm: Realm, publishedAlgorithms: [String]) -> JSONValue {
        var algorithms: [String] = []
        for algorithm in publishedAlgorithms + [realm.signingAlgorithm.rawValue] where !algorithms.contains(algorithm) {
            algorithms.append(algorithm)
        }
        func strings(_ values: [String]) -> JSONValue { .array(values.map(JSONValue.string)) }
        return .object([
            "issuer": .string(issuer),
            "authorization_endpoint": .string(issuer + "/authorize"),
            "token_endpoint": .string(issuer + "/token"),
            "userinfo_endpoint": .string(issuer + "/userinfo"),
            "revocation_endpoint": .string(issuer + "/revoke"),
            "introspection_endpoint": .string(issuer + "/introspect"),
            "jwks_uri": .string(issuer + "/jwks.json"),
            "response_types_supported": strings(["code"]),
            "response_modes_supported": strings(["query"]),
            "grant_types_supported": strings(["authorization_code", "refresh_token"]),
            "code_challenge_methods_supported": strings(["S256"]),
            "subject_types_supported": strings(["public"]),
            "id_token_signing_alg_values_supported": strings(algorithms),
            "token_endpoint_auth_methods_supported": strings(["client_secret_basic", "client_secret_post", "none"]),
            "revocation_endpoint_auth_methods_supported": strings(["client_secret_basic", "client_secret_post", "none"]),
            "introspection_endpoint_auth_methods_supported": strings(["client_secret_basic", "client_secret_post"]),
            "scopes_supported": strings(scopesSupported),
            "claims_supported": strings(claimsSupported),
            "authorization_response_iss_parameter_supported": .bool(true),
        ])
    }
}

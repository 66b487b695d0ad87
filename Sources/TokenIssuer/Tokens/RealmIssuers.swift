/// The issuer identifier of every realm under one public URL: `{publicURL}/api/oauth/{realmID}`.
/// Tokens carry it as `iss`, verification demands it, and discovery and authorization
/// responses (RFC 9207 `iss`) announce it, so it is spelled here only.
public struct RealmIssuers: Sendable {
    /// Herald's public base URL, without a trailing slash.
    public let publicURL: String

    /// Issuers under `publicURL` (without a trailing slash).
    public init(publicURL: String) {
        self.publicURL = publicURL
    }

    /// The issuer of realm `realmID`'s tokens.
    public func issuer(realmID: String) -> String { "\(publicURL)/api/oauth/\(realmID)" }
}

import JOSE

/// The `client_secret` Apple's token and revoke endpoints take: an ES256 JWT signed with the
/// realm's `.p8` key ("Creating a client secret"). Signed afresh for every call and never
/// stored, so a rotated key or Team ID takes effect at once and no long-lived secret exists.
public enum AppleClientSecret {
    /// The audience Apple requires, whatever base URL Herald talks to.
    public static let audience = "https://appleid.apple.com"
    /// Lifetime of one secret: long enough for one call, far below Apple's six-month ceiling.
    public static let lifetimeSeconds: Int64 = 300

    /// A secret for `clientID` (the Services ID, or the Bundle ID a native code was issued to).
    public static func make(teamID: String, keyID: String, clientID: String, key: PrivateKey,
                            at: Int64) throws(JOSEError) -> String {
        let claims: JSONValue = [
            "iss": .string(teamID), "sub": .string(clientID), "aud": .string(audience),
            "iat": .number(Double(at)), "exp": .number(Double(at + lifetimeSeconds)),
        ]
        return try CompactJWS.sign(header: JOSEHeader(algorithm: .es256, kid: keyID), payload: claims.serialized(), key: key)
    }
}

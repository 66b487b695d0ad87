import JOSE
import Realms

/// Signs a session's access token (RFC 9068 `at+jwt`) and, for an `openid` scope, its ID
/// token, with the realm's active key, for `SessionStore`. Holds the decrypted keys (one
/// instance per process: opening a key is an AES-GCM open and a PKCS#8 parse) and the public
/// half of each key it signs with, which `AccessTokenVerifier` then trusts without reading
/// the key's row.
public final class TokenSigner: Sendable {
    /// Lifetime of ID tokens, in seconds.
    public static let idTokenTTL = 3600

    /// The issuer every token names.
    public let issuers: RealmIssuers
    private let masterKey: MasterKey
    /// Shared with the verifier of these tokens (`AccessTokenVerifier(database:signer:now:)`).
    let keys = SigningKeyCache()
    /// Each realm's active key, remembered under its settings stamp (`SessionStore.activeKeyLookup`).
    let activeKeys = ActiveKeyMemory()

    /// A signer opening the realms' sealed keys with `masterKey`.
    public init(masterKey: MasterKey, issuers: RealmIssuers) {
        self.masterKey = masterKey
        self.issuers = issuers
    }

    /// Opens `key` now (cached after the first use of a kid), so a key that cannot be opened
    /// fails the transaction that would start a session nobody got tokens for.
    func open(_ key: SealedSigningKey, realmID: String, at: Int64) throws {
        _ = try privateKey(key, realmID: realmID, at: at)
    }

    /// The session's tokens with `scope`, signed at `at`; `refreshToken` is handed back as is.
    func sign(session: SessionSnapshot, scope: [String], material: SigningMaterial, refreshToken: String,
              nonce: String?, at: Int64) throws -> IssuedTokens {
        let key = material.key
        let privateKey = try privateKey(key, realmID: session.realmID, at: at)
        let issuer = issuers.issuer(realmID: session.realmID)
        // An access token never outlives its session, nor its idle deadline: a session that
        // ends for want of use leaves no access token alive.
        let sessionEnd = min(session.expiresAt, session.idleExpiresAt ?? session.expiresAt)
        let accessTTL = Int(max(1, min(Int64(session.accessTokenTTL), sessionEnd - at)))
        let accessExp = at + Int64(accessTTL)
        // Written member by member in ascending key order, the bytes a sorted `JSONValue`
        // object would give, without building, hashing and sorting a dictionary per token.
        var access = JSONObjectWriter()
        access.add("aud", session.clientID)
        access.add("auth_time", session.authTime)
        access.add("client_id", session.clientID)
        access.add("exp", accessExp)
        access.add("iat", at)
        access.add("iss", issuer)
        access.add("jti", SecureRandom.token(byteCount: 16))
        access.add("scope", scope.joined(separator: " "))
        access.add("sid", session.id)
        access.add("sub", session.accountID)
        let accessToken = try CompactJWS.sign(header: JOSEHeader(alg: key.algorithm.rawValue, kid: key.kid, typ: "at+jwt"),
                                              payload: access.finish(), key: privateKey)
        var idToken: String?
        if material.answer == .tokenEndpoint, scope.contains("openid") {
            let account = material.account
            let email = scope.contains("email")
            let profile = scope.contains("profile")
            var claims = JSONObjectWriter()
            claims.add("aud", session.clientID)
            claims.add("auth_time", session.authTime)
            if email {
                claims.add("email", account.email)
                claims.add("email_verified", account.emailVerified)
            }
            claims.add("exp", at + Int64(Self.idTokenTTL))
            claims.add("iat", at)
            claims.add("iss", issuer)
            if profile, let name = account.name.formatted { claims.add("name", name) }
            if let nonce { claims.add("nonce", nonce) }
            if profile, let picture = account.pictureURL { claims.add("picture", picture) }
            claims.add("sid", session.id)
            claims.add("sub", session.accountID)
            idToken = try CompactJWS.sign(header: JOSEHeader(alg: key.algorithm.rawValue, kid: key.kid, typ: "JWT"),
                                          payload: claims.finish(), key: privateKey)
        }
        return IssuedTokens(sessionID: session.id, accountID: session.accountID, accessToken: accessToken,
                            expiresIn: accessTTL, refreshToken: refreshToken,
                            refreshExpiresIn: Int(max(0, session.expiresAt - at)), scope: scope, idToken: idToken,
                            profile: try material.profile?.profile())
    }

    private func privateKey(_ key: SealedSigningKey, realmID: String, at: Int64) throws -> PrivateKey {
        try keys.privateKey(kid: key.kid, realmID: realmID, sealed: key.sealed, masterKey: masterKey, at: at)
    }
}

/// What signing needs besides the session: the key and the account (for ID-token claims),
/// and the profile to hand back when the caller asked for one.
struct SigningMaterial: Sendable {
    let key: SealedSigningKey
    let account: Account
    let answer: SessionAnswer
    /// The first-party answer's account view, read with the session's transaction's COMMIT.
    let profile: AccountProfile.Deferred?
}

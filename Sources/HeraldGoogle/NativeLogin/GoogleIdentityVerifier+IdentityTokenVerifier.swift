import Login
import Realms
import Storage

/// Google's half of the identity-token login: the realm's Google settings set the accepted
/// client ids and hosted domain, the realm whether a nonce is required; Google's claims become
/// the provider identity account resolution takes (`email_verified` included, so an
/// unverified email never links; the token's name when the request brings none, and its picture).
extension GoogleIdentityVerifier: IdentityTokenVerifier {
    /// The provider name stored on identities, logged and counted.
    public static let provider = "google"

    /// The realm's enabled Google requirements.
    public func enabledConfiguration(_ db: any SQLExecutor, realm: Realm) throws -> GoogleRealmRequirements? {
        try readRequirements(db, realm: realm)
    }

    /// Verifies the token for the realm, deferring the replay claim; the result carries the
    /// client id that matched.
    public func verify(token: String, rawNonce: String?, realm: Realm,
                       configuration: GoogleRealmRequirements) async -> IdentityVerification {
        let policy = GoogleVerificationPolicy(requirements: configuration, nonceRequired: realm.nonceRequired,
                                              rawNonce: rawNonce, realmID: realm.id)
        let verification = await verify(token: token, policy: policy)
        switch verification.result {
        case .verified(let claims):
            return .verified(ProviderIdentityClaims(provider: Self.provider, subject: claims.subject, email: claims.email,
                                                    emailVerified: claims.emailVerified, isPrivateEmail: false,
                                                    name: claims.name, picture: claims.picture),
                             audience: claims.audience, replay: verification.replay)
        case .rejected(let reason): return .rejected(reason: reason.rawValue)
        case .tooLarge: return .tooLarge
        case .unavailable(let retryAfter): return .unavailable(retryAfterSeconds: retryAfter)
        }
    }
}

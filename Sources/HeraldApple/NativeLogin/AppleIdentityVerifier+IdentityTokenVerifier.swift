import Login
import Realms
import Storage

/// Apple's half of the identity-token login: the realm's Apple provider sets the accepted
/// audiences, the realm whether a nonce is required; Apple's claims become the provider
/// identity that account resolution takes.
extension AppleIdentityVerifier: IdentityTokenVerifier {
    /// The provider name stored on identities, logged and counted.
    public static let provider = "apple"

    /// The realm's Apple provider when it is enabled.
    public func enabledConfiguration(_ db: any SQLExecutor, realm: Realm) throws -> AppleProviderConfig? {
        guard let provider = try AppleProviderStore.load(db, realmID: realm.id), provider.enabled else { return nil }
        return provider
    }

    /// Verifies the token against the realm's audiences and nonce rule, deferring the replay claim;
    /// the result carries the audience that matched.
    public func verify(token: String, rawNonce: String?, realm: Realm,
                       configuration provider: AppleProviderConfig) async -> IdentityVerification {
        let policy = AppleVerificationPolicy(audiences: Set(provider.acceptedAudiences), nonceRequired: realm.nonceRequired,
                                             rawNonce: rawNonce, realmID: realm.id)
        let verification = await verifyDeferringReplay(token: token, policy: policy)
        switch verification.result {
        case .verified(let claims):
            return .verified(ProviderIdentityClaims(provider: Self.provider, subject: claims.subject, email: claims.email,
                                                    emailVerified: claims.emailVerified,
                                                    isPrivateEmail: claims.isPrivateEmail),
                             audience: claims.audience, replay: verification.replay)
        case .rejected(let reason): return .rejected(reason: reason.rawValue)
        case .tooLarge: return .tooLarge
        case .unavailable(let retryAfter): return .unavailable(retryAfterSeconds: retryAfter)
        }
    }
}

/// Recorded by the login's write transaction (`AppleReplayClaim.record(in:)`).
extension AppleReplayClaim: ReplayClaim {}

import Foundation
import Login
import ProviderKeys
import Realms
import Storage

/// Verifies Google ID tokens for the login pipeline: RS256 under Google's JWKS, `iss`, `aud`
/// and `azp` against the realm's client ids, lifetime with Apple's leeway, the nonce verbatim,
/// the hosted domain when the realm sets one; single use is left to the login's transaction.
public struct GoogleIdentityVerifier: Sendable {
    /// Identity tokens longer than this (in bytes) are refused before parsing (Apple's limit).
    public static let maximumTokenBytes = IdentityTokenBounds.maximumTokenBytes
    /// Clock-skew allowance for `exp` and `iat` (Apple's).
    public static let clockLeewaySeconds = IdentityTokenBounds.clockLeewaySeconds

    /// Reads a realm's enabled Google requirements; nil when the realm has no enabled Google provider.
    public typealias RequirementsReader = @Sendable (any SQLExecutor, Realm) throws -> GoogleRealmRequirements?

    private let keys: any SigningKeySource
    private let replayStore: GoogleReplayStore?
    private let requirements: RequirementsReader
    private let now: @Sendable () -> Date

    /// Creates a verifier. `jwks` is normally a ``JWKSCache`` over ``GoogleJWKS``;
    /// `replayStore` nil disables replay protection (tests); `requirements` reads the realm's
    /// Google settings in the login's pre-check read; `now` is the clock.
    public init(jwks: any SigningKeySource, replayStore: GoogleReplayStore?,
                requirements: @escaping RequirementsReader, now: @escaping @Sendable () -> Date) {
        self.keys = jwks
        self.replayStore = replayStore
        self.requirements = requirements
        self.now = now
    }

    /// The realm's requirements, as the reader gives them.
    func readRequirements(_ db: any SQLExecutor, realm: Realm) throws -> GoogleRealmRequirements? {
        try requirements(db, realm)
    }

    /// Verifies one token against one realm's policy, leaving its replay claim to the caller's
    /// write transaction (nil without a replay store). Key and signature work finish here.
    public func verify(token: String, policy: GoogleVerificationPolicy) async
        -> (result: GoogleVerificationResult, replay: (any ReplayClaim)?) {
        let at = now()
        let evaluator = GoogleTokenEvaluator(keys: keys, policy: policy, now: at, leeway: Self.clockLeewaySeconds)
        let (result, claims, jws) = await evaluator.evaluate(token: token)
        guard case .verified = result, let claims, let jws, let replayStore else { return (result, nil) }
        let seconds = at.unixSeconds
        let claim = GoogleReplayClaim(
            store: replayStore, realmID: policy.realmID,
            keyHash: GoogleReplayStore.keyHash(subject: claims.subject, nonce: claims.nonce, signature: jws.signature),
            expiresAt: Int64((claims.expiresAt + Self.clockLeewaySeconds).rounded(.up)), now: seconds,
            purgeLimit: replayStore.purgeBudget(now: seconds))
        return (result, claim)
    }
}

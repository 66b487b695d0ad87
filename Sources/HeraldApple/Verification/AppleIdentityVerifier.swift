import Foundation

/// Verifies Apple identity tokens for native login (CONTRACT.md "Apple native login" → Verification).
///
/// Every rejection names exactly one reason: the first check that fails in the contract's
/// order. A JWKS outage that no cached key can absorb is `unavailable`, never a rejection and
/// never a skipped signature check.
public struct AppleIdentityVerifier: Sendable {
    /// Identity tokens longer than this (in bytes) are refused before parsing (`tooLarge`).
    public static let maximumTokenBytes = 16_384
    /// The only accepted `iss`.
    public static let appleIssuer = IssuerCheck.appleIssuer
    /// Clock-skew allowance for `exp` and `iat`.
    public static let clockLeewaySeconds: TimeInterval = 60

    private let keys: any AppleSigningKeySource
    private let replayStore: AppleReplayStore?
    private let now: @Sendable () -> Date

    /// Creates a verifier. `jwks` is normally an ``AppleJWKSCache``; `replayStore` nil disables
    /// replay protection (tests, diagnosis); `now` is the clock.
    public init(jwks: any AppleSigningKeySource, replayStore: AppleReplayStore?,
                now: @escaping @Sendable () -> Date) {
        self.keys = jwks
        self.replayStore = replayStore
        self.now = now
    }

    /// Verifies one token against one realm's policy, but does not claim (sub, nonce): a
    /// verified token comes back with the claim the caller must record in its own write
    /// transaction (and refuse the token as `replayed` when that reports a replay). The claim is nil when
    /// the token has no nonce or no replay store is configured. Signature and JWKS work are
    /// all done here, before the caller takes the writer.
    func verifyDeferringReplay(token: String, policy: AppleVerificationPolicy) async
        -> (result: AppleVerificationResult, replay: AppleReplayClaim?) {
        let evaluator = AppleTokenEvaluator(keys: keys, policy: policy, now: now(), leeway: Self.clockLeewaySeconds)
        let replay: AppleTokenEvaluator.ReplayGuard = if let replayStore {
            .deferred(replayStore, realmID: policy.realmID)
        } else {
            .skip(reason: "no replay store configured")
        }
        let evaluation = await evaluator.evaluate(token: token, mode: .verification, replay: replay)
        let result = evaluation.result
        guard case .verified = result else { return (result, nil) }
        return (result, evaluation.deferredReplay)
    }
}

import Foundation
import JOSE
import Storage

/// Runs the checks of CONTRACT.md in order. Both ``AppleIdentityVerifier`` and
/// ``AppleTokenDiagnosis`` go through this one function, so diagnosis cannot drift from
/// verification.
///
/// In `verification` mode it stops at the first failure (and never fetches a key for a token
/// whose alg is refused). In `diagnosis` mode it goes on with every check whose inputs are
/// still available, so an operator sees all that is wrong; the verdict is nevertheless the
/// first failure in order, which is exactly what verification mode returns.
struct AppleTokenEvaluator: Sendable {
    enum Mode { case verification, diagnosis }

    /// What the replay step does: diagnosis skips it; verification defers the token's claim
    /// (sub, nonce, expiry) to the caller's write transaction (``AppleTokenEvaluation/deferredReplay``).
    enum ReplayGuard {
        case skip(reason: String)
        case deferred(AppleReplayStore, realmID: String)
    }

    let keys: any AppleSigningKeySource
    let policy: AppleVerificationPolicy
    let now: Date
    let leeway: TimeInterval

    func evaluate(token: String, mode: Mode, replay: ReplayGuard) async -> AppleTokenEvaluation {
        var run = AppleTokenEvaluation()

        // structure → malformed
        let size = token.utf8.count
        guard size <= AppleIdentityVerifier.maximumTokenBytes else {
            run.record(.structure, .failed(.malformed, detail: "token is \(size) bytes, over the \(AppleIdentityVerifier.maximumTokenBytes)-byte limit"))
            run.verdict = .tooLarge
            return run.skippingRest(after: .structure, because: "not evaluated: the token is malformed")
        }
        let jws: CompactJWS
        do {
            jws = try CompactJWS(parsing: token, maxLength: AppleIdentityVerifier.maximumTokenBytes)
        } catch {
            run.record(.structure, .failed(.malformed, detail: "not a compact JWS with JSON header and claims (\(error.code))"))
            return run.skippingRest(after: .structure, because: "not evaluated: the token is malformed")
        }
        run.header = jws.headerFields
        let claimObject: [String: JSONValue]
        do {
            claimObject = try jws.payloadObject()
        } catch {
            run.record(.structure, .failed(.malformed, detail: "claims are not a JSON object (\(error.code))"))
            return run.skippingRest(after: .structure, because: "not evaluated: the token is malformed")
        }
        run.claims = claimObject
        if let critical = jws.header.crit {
            // RFC 7515 §4.1.11: extensions we do not understand make the token unusable; Apple uses none.
            run.record(.structure, .failed(.malformed, detail: "header lists \(critical.count) critical extension(s), none of which is understood"))
            return run.skippingRest(after: .structure, because: "not evaluated: the token is malformed")
        }
        let claimSet: AppleTokenClaimSet
        do {
            claimSet = try AppleTokenClaimSet(claimObject)
        } catch {
            run.record(.structure, .failed(.malformed, detail: error.detail))
            return run.skippingRest(after: .structure, because: "not evaluated: the token is malformed")
        }
        run.record(.structure, .passed(detail: "compact JWS; header and claims are JSON objects with the required claims"))

        // algorithm (allow-list) → algorithm; key → unknown_key; algorithm (fit) → algorithm
        let algorithmCheck = AlgorithmCheck()
        let (allowListOutcome, algorithm) = algorithmCheck.allowList(alg: jws.header.alg)
        if mode == .verification, algorithm == nil {
            run.record(.algorithm, allowListOutcome)
            return run
        }
        let (keyOutcome, resolution) = await KeyCheck(source: keys).evaluate(keyID: jws.header.kid)
        var usableKey: PublicKey?
        if let algorithm, case .found(let key, let keyID) = resolution {
            let fitOutcome = algorithmCheck.fit(algorithm: algorithm, keyType: key.keyType, keyID: keyID)
            run.record(.algorithm, fitOutcome)
            if fitOutcome.failureReason == nil { usableKey = key }
        } else {
            run.record(.algorithm, allowListOutcome)
        }
        run.record(.key, keyOutcome)
        if case .unavailable(let retryAfter) = resolution { run.markUnavailable(retryAfterSeconds: retryAfter) }
        if mode == .verification, run.verdict != nil { return run }

        // signature → signature
        if let key = usableKey, let algorithm {
            run.record(.signature, SignatureCheck().evaluate(jws: jws, key: key, algorithm: algorithm))
        } else {
            run.record(.signature, .skipped(detail: "not evaluated: no key fits the token"))
        }
        if mode == .verification, run.verdict != nil { return run }

        // The claim checks; in diagnosis they also run on a token whose signature failed.
        run.record(.issuer, IssuerCheck().evaluate(issuer: claimSet.issuer))
        if mode == .verification, run.verdict != nil { return run }
        let (audienceOutcome, matchedAudience) = AudienceCheck(accepted: policy.audiences).evaluate(audiences: claimSet.audiences)
        run.record(.audience, audienceOutcome)
        if mode == .verification, run.verdict != nil { return run }
        run.record(.expiry, ExpiryCheck(now: now, leeway: leeway).evaluate(expiresAt: claimSet.expiresAt, issuedAt: claimSet.issuedAt))
        if mode == .verification, run.verdict != nil { return run }
        run.record(.issuedAt, IssuedAtCheck(now: now, leeway: leeway).evaluate(issuedAt: claimSet.issuedAt, notBefore: claimSet.notBefore))
        if mode == .verification, run.verdict != nil { return run }
        run.record(.nonce, NonceCheck(required: policy.nonceRequired, rawNonce: policy.rawNonce).evaluate(claim: claimSet.nonce))
        if mode == .verification, run.verdict != nil { return run }

        // replay → replayed; only a token that passed everything else may consume its claim.
        switch replay {
        case .skip(let reason):
            run.record(.replay, .skipped(detail: reason))
        case .deferred(let store, let realmID):
            if run.verdict != nil {
                run.record(.replay, .skipped(detail: "not evaluated: an earlier check failed"))
            } else if let nonce = claimSet.nonce {
                // Not passed yet: the caller must record the claim and refuse the token when it is taken.
                run.record(.replay, .skipped(detail: "left to the caller's transaction"))
                let at = now.unixSeconds
                run.deferredReplay = AppleReplayClaim(
                    store: store, realmID: realmID, subject: claimSet.subject, nonce: nonce,
                    expiresAt: Int64((claimSet.expiresAt + leeway).rounded(.up)), now: at,
                    purgeLimit: store.purgeBudget(now: at))
            } else {
                run.record(.replay, .passed(detail: "token has no nonce; tokens without one are not replay-tracked"))
            }
        }

        if run.verdict == nil, let matchedAudience {
            run.verdict = .verified(claimSet.identityClaims(matchedAudience: matchedAudience))
        }
        return run
    }
}

/// The steps taken and the verdict they lead to.
struct AppleTokenEvaluation: Sendable {
    var header: [String: JSONValue]?
    var claims: [String: JSONValue]?
    var steps: [AppleCheckStep]
    /// The first terminal event in check order: a rejection, unavailability, or (last) success.
    var verdict: AppleVerificationResult?
    /// With a deferred replay guard: the claim the caller must record before accepting the token.
    var deferredReplay: AppleReplayClaim?

    /// Room for every check's step from the start: appended one by one they made the array
    /// grow several times per login (`Array._createNewBuffer` in a login's profile).
    init() {
        steps = []
        steps.reserveCapacity(Self.checkCount)
    }

    private static let checkCount = AppleCheckName.allCases.count

    /// The final result; an evaluation that ended without a verdict cannot happen, but fails closed.
    var result: AppleVerificationResult { verdict ?? .rejected(.malformed) }

    mutating func record(_ name: AppleCheckName, _ outcome: AppleCheckOutcome) {
        steps.append(AppleCheckStep(name: name, outcome: outcome))
        if verdict == nil, let reason = outcome.failureReason { verdict = .rejected(reason) }
    }

    mutating func markUnavailable(retryAfterSeconds: Int) {
        if verdict == nil { verdict = .unavailable(retryAfterSeconds: retryAfterSeconds) }
    }

    /// Marks every check after `name` as skipped, so a report always lists all checks.
    func skippingRest(after name: AppleCheckName, because reason: String) -> AppleTokenEvaluation {
        var copy = self
        let all = AppleCheckName.allCases
        guard let index = all.firstIndex(of: name) else { return copy }
        for later in all[(index + 1)...] { copy.steps.append(AppleCheckStep(name: later, outcome: .skipped(detail: reason))) }
        return copy
    }
}

import Foundation
import JOSE

/// Offline or online diagnosis of one Apple identity token (`herald diagnose apple-token`).
///
/// Runs the verifier's own evaluator in diagnosis mode: the same checks, in the same order,
/// with the same verdict, plus the checks after the first failure where their inputs exist.
/// Diagnosis semantics: the realm does not require a nonce (so a token without a nonce claim
/// passes when no raw nonce is given), and replay is not checked (listed as skipped).
public enum AppleTokenDiagnosis {
    /// The latest evaluation time (unix seconds) a diagnosis takes: the latest time a claim may
    /// name (9999-12-31T23:59:59Z), so every time it formats stays in range.
    public static let latestEvaluationTime = Int64(AppleTokenClaimSet.latestNumericDate)

    /// `text` quoted for a one-line message as the report's details quote header values:
    /// shortened, control characters replaced, so hostile input cannot flood or forge output.
    public static func quoted(_ text: String) -> String { AlgorithmCheck.quoted(text) }

    /// Diagnoses `token` against `audiences`, resolving keys through `keys` at time `now`.
    public static func diagnose(token: String, audiences: Set<String>, rawNonce: String?,
                                keys: any AppleSigningKeySource, now: Date) async -> AppleTokenDiagnosisReport {
        let policy = AppleVerificationPolicy(audiences: audiences, nonceRequired: false, rawNonce: rawNonce, realmID: "diagnosis")
        let evaluator = AppleTokenEvaluator(keys: keys, policy: policy, now: now, leeway: AppleIdentityVerifier.clockLeewaySeconds)
        let evaluation = await evaluator.evaluate(
            token: token, mode: .diagnosis,
            replay: .skip(reason: "not checked in diagnosis: replay protection needs the server's database"))
        return AppleTokenDiagnosisReport(header: evaluation.header, claims: evaluation.claims,
                                         checks: evaluation.steps, result: evaluation.result)
    }
}

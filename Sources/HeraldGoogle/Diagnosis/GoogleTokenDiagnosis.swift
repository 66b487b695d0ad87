import Foundation
import JOSE
import ProviderKeys

/// Offline or online diagnosis of one Google ID token (`herald diagnose google-token`): the
/// verifier's own evaluator with the operator's client ids, hosted domain and nonce, reported
/// as the decoded header and claims (never the signature), the checks in order and the verdict.
///
/// Google's evaluator stops at the first failure, so the checks after it are reported as not
/// evaluated rather than guessed. As with Apple's diagnosis the nonce is optional (a realm with
/// `nonceRequired=false`) and replay is not checked (it needs the server's database).
public enum GoogleTokenDiagnosis {
    /// Each check by name, with the refusal it answers when it fails, in the evaluator's order.
    static let checks: [(name: String, reason: GoogleRejectionReason)] = [
        ("format", .malformed), ("algorithm", .algorithm), ("key", .unknownKey), ("signature", .signature),
        ("issuer", .issuer), ("audience", .audience), ("azp", .azp), ("expiry", .expired),
        ("not_before", .notYetValid), ("nonce", .nonce), ("hosted_domain", .hostedDomain),
    ]

    /// Diagnoses `token` for `requirements` and `rawNonce`, resolving keys through `keys` at `now`.
    public static func diagnose(token: String, requirements: GoogleRealmRequirements, rawNonce: String?,
                                keys: any SigningKeySource, now: Date) async -> Report {
        let policy = GoogleVerificationPolicy(requirements: requirements, nonceRequired: false, rawNonce: rawNonce,
                                              realmID: "diagnosis")
        let evaluator = GoogleTokenEvaluator(keys: keys, policy: policy, now: now,
                                             leeway: GoogleIdentityVerifier.clockLeewaySeconds)
        let (result, _, _) = await evaluator.evaluate(token: token)
        let jws = try? CompactJWS(parsing: token, maxLength: IdentityTokenBounds.maximumTokenBytes)
        return Report(header: jws?.headerFields, claims: try? jws?.payloadObject(), result: result)
    }

    /// The diagnosis of one token.
    public struct Report: TokenDiagnosisReport, Sendable {
        /// The decoded JOSE header, when the token could be parsed.
        public let header: [String: JSONValue]?
        /// The decoded claims, when the token could be parsed. May include the email: this is
        /// the operator's own terminal output, never a log line.
        public let claims: [String: JSONValue]?
        /// What the verifier would answer (without replay protection).
        public let result: GoogleVerificationResult

        public var outcome: TokenDiagnosisOutcome {
            switch result {
            case .verified: .valid
            case .rejected(let reason): .rejected(reason: reason.rawValue)
            case .tooLarge: .rejected(reason: GoogleRejectionReason.malformed.rawValue)
            case .unavailable: .unavailable(provider: "google")
            }
        }

        /// The report in the shape of Apple's (`{"checks":[{"detail","name","passed"}…],"claims",
        /// "header","reason","verdict"}`, sorted keys, indented): a failed check carries `reason`;
        /// the checks after it, and replay, `"passed": null` with `"skipped": true`.
        public func json() -> String {
            let failedAt: Int? = switch result {
            case .verified: nil
            case .rejected(let reason): GoogleTokenDiagnosis.checks.firstIndex { $0.reason == reason }
            case .tooLarge: 0
            case .unavailable: GoogleTokenDiagnosis.checks.firstIndex { $0.reason == .unknownKey }
            }
            var values: [JSONValue] = GoogleTokenDiagnosis.checks.enumerated().map { index, check in
                var members: [String: JSONValue] = ["name": .string(check.name)]
                if let failedAt, index == failedAt {
                    members["passed"] = .bool(false)
                    members["reason"] = .string(reason ?? check.reason.rawValue)
                    members["detail"] = .string(reason == "google_unavailable"
                        ? "Google's keys could not be fetched" : "failed: \(check.reason.rawValue)")
                } else if let failedAt, index > failedAt {
                    members["passed"] = .null
                    members["skipped"] = .bool(true)
                    members["detail"] = "not evaluated: an earlier check failed"
                } else {
                    members["passed"] = .bool(true)
                    members["detail"] = "passed"
                }
                return .object(members)
            }
            values.append(["name": "replay", "passed": .null, "skipped": true,
                           "detail": "not checked in diagnosis: replay protection needs the server's database"])
            return TokenDiagnosisJSON.render(header: header, claims: claims, checks: values, verdict: verdict,
                                         reason: reason)
        }
    }
}

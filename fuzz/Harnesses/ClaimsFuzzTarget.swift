import Dispatch
import Foundation
@testable import HeraldApple
import JOSE
import Synchronization

/// libFuzzer entry point for the Apple token checks at the claims level (issue #19: `exp: 1e+20`
/// trapped the diagnosis, and the byte-level `jws` harness never got a signed token that far).
///
/// The input is one line per claim, in ``ClaimsFuzzInput/claimNames`` order: a line that is
/// JSON is that claim's value verbatim (so `1e+20`, `-0`, `1.0e2` keep their spelling), an
/// empty line keeps a valid default, `-` drops the claim, anything else becomes a JSON string.
/// The claims are signed with a real ES256 key, so every check has its inputs, and evaluated
/// in diagnosis mode (every check runs) and in verification mode, which must agree.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzClaims(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let token = ClaimsFuzzInput.signedToken(lines: bytes.split(separator: 0x0A, omittingEmptySubsequences: false))
    let (report, verified) = ClaimsFuzzInput.evaluate(token)

    precondition(report.checks.map(\.name) == AppleCheckName.allCases, "the report does not list every check once, in order")
    precondition(report.result == verified, "diagnosis and verification disagree")
    let firstFailure = report.checks.lazy.compactMap(\.outcome.failureReason).first
    precondition(firstFailure == verified.rejectionReason, "the verdict is not the first failed check")
    // 0 valid or 1 rejected: only a fetched JWKS can make a report unavailable (3).
    precondition([0, 1].contains(report.exitCode),
                 "a static key set produced exit status \(report.exitCode)")
    // The claims are always a JSON object under a good signature: only their values can fail.
    if case .passed = report.checks[0].outcome {
        guard case .passed = report.checks[3].outcome else { preconditionFailure("a validly signed token failed its signature") }
    }
    guard case .object(let printed)? = try? JSONValue.parse(Array(report.json().utf8)) else {
        preconditionFailure("the report is not a JSON object")
    }
    precondition(printed["reason"]?.stringValue == report.reason, "the printed reason differs")
    if case .verified(let claims) = verified { ClaimsFuzzInput.checkAccepted(claims) }
    return 0
}

/// The harness's fixed key, clock and claim template, and the input decoding.
enum ClaimsFuzzInput {
    static let now = Date(timeIntervalSince1970: 1_750_000_000)
    static let audience = "com.example.fuzz.ios"
    static let rawNonce = "fuzz-raw-nonce"
    static let keyID = "fuzz-ec"
    static let key: PrivateKey = try! PrivateKey.generate(for: .es256)
    static let keys = AppleStaticKeySet(keySet: try! JWKSet.parse(JWKSet.document([key.publicKey.jwk(keyID: keyID)])))

    /// The claims a line can change, in input order.
    static let claimNames = ["exp", "iat", "nbf", "auth_time", "sub", "aud", "iss", "nonce",
                             "email", "email_verified", "is_private_email"]

    /// A valid token's claims as raw JSON text; `nbf` is absent unless a line gives one.
    static let defaults: [String: String] = {
        let issued = Int64(now.timeIntervalSince1970)
        let nonce = SHA256.hexDigest(rawNonce)
        return ["exp": "\(issued + 600)", "iat": "\(issued)", "auth_time": "\(issued)",
                "sub": #""001234.0123456789abcdef.0042""#, "aud": "\"\(audience)\"",
                "iss": #""https://appleid.apple.com""#, "nonce": "\"\(nonce)\"",
                "email": #""someone@example.com""#, "email_verified": "true"]
    }()

    /// The payload built from `lines`, signed with ``key``.
    static func signedToken(lines: [ArraySlice<UInt8>]) -> String {
        var members: [String] = []
        for (index, name) in claimNames.enumerated() {
            let line = index < lines.count ? Array(lines[index]) : []
            if line == [UInt8(ascii: "-")] { continue }
            if line.isEmpty {
                if let value = defaults[name] { members.append("\"\(name)\":\(value)") }
            } else if (try? JSONValue.parse(line)) != nil {
                members.append("\"\(name)\":" + String(decoding: line, as: UTF8.self))
            } else {
                members.append("\"\(name)\":" + String(decoding: JSONValue.string(String(decoding: line, as: UTF8.self)).serialized(), as: UTF8.self))
            }
        }
        let payload = Array(("{" + members.joined(separator: ",") + "}").utf8)
        return try! CompactJWS.sign(header: JOSEHeader(algorithm: .es256, kid: keyID), payload: payload, key: key)
    }

    /// Diagnosis and verification of `token` at ``now``, run to completion on this thread.
    static func evaluate(_ token: String) -> (AppleTokenDiagnosisReport, AppleVerificationResult) {
        // A class around the Mutex: a noncopyable Mutex cannot be captured by the task itself.
        final class Outcome: Sendable {
            let value = Mutex<(AppleTokenDiagnosisReport, AppleVerificationResult)?>(nil)
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        // Task.immediate runs on this thread until the first real suspension, and with a
        // static key set there is none: the task ends, and is freed, before this returns. With
        // a plain Task its memory was freed after the next input began, so every input looked
        // to libFuzzer like a leak and paid a full LeakSanitizer scan (57 inputs/s).
        Task.immediate {
            let report = await AppleTokenDiagnosis.diagnose(token: token, audiences: [audience], rawNonce: rawNonce,
                                                            keys: keys, now: now)
            let policy = AppleVerificationPolicy(audiences: [audience], nonceRequired: false, rawNonce: rawNonce, realmID: "fuzz")
            let verified = await AppleIdentityVerifier(jwks: keys, replayStore: nil, now: { now }).verifyDeferringReplay(token: token, policy: policy).result
            outcome.value.withLock { $0 = (report, verified) }
            done.signal()
        }
        done.wait()
        return outcome.value.withLock { $0! }
    }

    /// What an accepted token must satisfy, whatever the input: the contract's time checks and
    /// issue #20's bounds, recomputed here from the claims the verifier returned.
    static func checkAccepted(_ claims: AppleIdentityClaims) {
        let current = now.timeIntervalSince1970, leeway = AppleIdentityVerifier.clockLeewaySeconds
        let issued = claims.issuedAt.timeIntervalSince1970, expires = claims.expiresAt.timeIntervalSince1970
        precondition(current < expires + leeway, "accepted an expired token")
        precondition(issued <= current + leeway, "accepted a token issued in the future")
        precondition(current - issued <= ExpiryCheck.maximumAgeSeconds + leeway, "accepted a token older than the age bound")
        precondition(expires - issued <= AppleTokenClaimSet.maximumLifetimeSeconds, "accepted a lifetime over the bound")
        precondition(claims.subject.utf8.count <= AppleTokenClaimSet.maximumSubjectBytes, "accepted a sub over the bound")
        for time in [issued, expires, claims.authTime?.timeIntervalSince1970].compactMap({ $0 }) {
            precondition(time == time.rounded(.towardZero) && (0...AppleTokenClaimSet.latestNumericDate).contains(time),
                         "accepted a claim time that is not whole seconds in range")
        }
        precondition(claims.audience == audience, "accepted another audience")
    }
}

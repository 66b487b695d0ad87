import Foundation
import JOSE

/// Verifies the signed payload of an Apple server-to-server notification with the same checks
/// (and the same JWKS cache) as identity tokens: structure, algorithm allow-list, `kid`,
/// signature, issuer, audience among the realm's. Apple's payloads carry `exp` (`iat` + 1 day):
/// an expired one is refused (RFC 7519 §4.1.4), with the identity tokens' leeway for clock skew.
/// `iat` must be a whole second, not in the future beyond the leeway and not older than
/// `maximumAgeSeconds`, which bounds how long `jti`s must be remembered for idempotency. A
/// payload without `exp` is still accepted, bounded by that age alone, as it was before Herald
/// read `exp`.
public struct AppleNotificationVerifier: Sendable {
    /// A payload older than this (by `iat`) is refused as `expired`; processed `jti`s are kept
    /// at least this long, so an accepted replay is always recognised.
    public static let maximumAgeSeconds: Int64 = 7 * 86_400
    /// Longest `jti` and `sub` accepted (Apple's are far shorter).
    static let maximumIdentifierBytes = 255

    /// What verifying one payload gave.
    public enum Result: Sendable, Equatable {
        case verified(AppleNotification)
        case rejected(AppleNotificationRejection)
        /// Apple's JWKS cannot be fetched and no cached key decides: Apple should retry.
        case unavailable(retryAfterSeconds: Int)
    }

    private let keys: any AppleSigningKeySource
    private let now: @Sendable () -> Date

    public init(keys: any AppleSigningKeySource, now: @escaping @Sendable () -> Date) {
        self.keys = keys
        self.now = now
    }

    /// Verifies `payload` for a realm accepting `audiences`.
    public func verify(payload: String, audiences: Set<String>) async -> Result {
        guard payload.utf8.count <= AppleIdentityVerifier.maximumTokenBytes,
              let jws = try? CompactJWS(parsing: payload, maxLength: AppleIdentityVerifier.maximumTokenBytes),
              let claims = try? jws.payloadObject(), jws.header.crit == nil else {
            return .rejected(.token(.malformed))
        }
        let algorithmCheck = AlgorithmCheck()
        guard let algorithm = algorithmCheck.allowList(alg: jws.header.alg).1 else { return .rejected(.token(.algorithm)) }
        let key: PublicKey
        switch await KeyCheck(source: keys).evaluate(keyID: jws.header.kid).1 {
        case .found(let found, let keyID):
            guard algorithmCheck.fit(algorithm: algorithm, keyType: found.keyType, keyID: keyID).failureReason == nil else {
                return .rejected(.token(.algorithm))
            }
            key = found
        case .notFound: return .rejected(.token(.unknownKey))
        case .unavailable(let retryAfter): return .unavailable(retryAfterSeconds: retryAfter)
        }
        guard SignatureCheck().evaluate(jws: jws, key: key, algorithm: algorithm).failureReason == nil else {
            return .rejected(.token(.signature))
        }
        guard IssuerCheck().evaluate(issuer: claims["iss"]?.stringValue).failureReason == nil else {
            return .rejected(.token(.issuer))
        }
        let audienceClaim: [String] = switch claims["aud"] {
        case .string(let single)?: [single]
        case .array(let many)?: many.compactMap(\.stringValue)
        default: []
        }
        guard AudienceCheck(accepted: audiences).evaluate(audiences: audienceClaim).1 != nil else {
            return .rejected(.token(.audience))
        }
        // Whole seconds in the NumericDate range, like identity tokens' times.
        guard let issuedAt = claims["iat"]?.int64Value, (0...253_402_300_799).contains(issuedAt) else {
            return .rejected(.token(.malformed))
        }
        // `exp`, when present, is read like `iat`: anything but a whole second in range is malformed.
        var expiresAt: Int64?
        if let claim = claims["exp"] {
            guard let value = claim.int64Value, (0...253_402_300_799).contains(value) else {
                return .rejected(.token(.malformed))
            }
            expiresAt = value
        }
        let at = now().unixSeconds
        let leeway = Int64(AppleIdentityVerifier.clockLeewaySeconds)
        if issuedAt > at + leeway { return .rejected(.token(.notYetValid)) }
        if issuedAt < at - Self.maximumAgeSeconds { return .rejected(.token(.expired)) }
        // Expired once `exp` + leeway is reached, as identity tokens are (ExpiryCheck).
        if let expiresAt, at >= expiresAt + leeway { return .rejected(.token(.expired)) }
        guard let id = claims["jti"]?.stringValue, Self.isIdentifier(id),
              let event = Self.event(claims), let typeName = event["type"]?.stringValue, !typeName.isEmpty,
              typeName.utf8.count <= 64, let subject = event["sub"]?.stringValue, Self.isIdentifier(subject) else {
            return .rejected(.missingEvent)
        }
        return .verified(AppleNotification(id: id, type: AppleNotification.EventType(typeName), subject: subject))
    }

    /// `events` as Apple sends it (a JSON string holding an object), as an object, or — for
    /// senders that flatten it — the top-level `type` and `sub`.
    static func event(_ claims: [String: JSONValue]) -> [String: JSONValue]? {
        switch claims["events"] {
        case .object(let object)?: return object
        case .string(let text)?:
            guard text.utf8.count <= AppleIdentityVerifier.maximumTokenBytes,
                  let object = (try? JSONValue.parse(Array(text.utf8)))?.objectValue else { return nil }
            return object
        case nil:
            guard claims["type"] != nil else { return nil }
            return claims
        default: return nil
        }
    }

    static func isIdentifier(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= maximumIdentifierBytes && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}

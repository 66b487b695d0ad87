import Foundation
import JOSE
import ProviderKeys
import Storage

/// Runs Google's checks in order and stops at the first failure, so every refusal names one
/// reason: malformed, algorithm, unknown_key, signature, issuer, audience, azp, expired,
/// not_yet_valid, nonce, hosted_domain (replayed is the login's write transaction).
///
/// A token whose alg is refused never triggers a key fetch; a JWKS outage that no cached key
/// can absorb is `unavailable`, never a refusal.
struct GoogleTokenEvaluator: Sendable {
    /// Google writes `iss` both ways.
    static let issuers: Set<String> = ["accounts.google.com", "https://accounts.google.com"]

    let keys: any SigningKeySource
    let policy: GoogleVerificationPolicy
    let now: Date
    let leeway: TimeInterval

    /// The verdict and, for a verified token, the decoded claims (for the replay claim).
    func evaluate(token: String) async -> (GoogleVerificationResult, GoogleTokenClaimSet?, CompactJWS?) {
        guard token.utf8.count <= IdentityTokenBounds.maximumTokenBytes else { return (.tooLarge, nil, nil) }
        guard let jws = try? CompactJWS(parsing: token, maxLength: IdentityTokenBounds.maximumTokenBytes),
              let object = try? jws.payloadObject(), jws.header.crit == nil,
              let claims = try? GoogleTokenClaimSet(object)
        else { return (.rejected(.malformed), nil, nil) }

        // Google signs with RS256 only: the allow-list runs before any key lookup.
        guard jws.header.alg == JWSAlgorithm.rs256.rawValue else { return (.rejected(.algorithm), nil, nil) }
        guard let keyID = jws.header.kid, !keyID.isEmpty else { return (.rejected(.unknownKey), nil, nil) }
        let key: PublicKey
        switch await keys.resolve(keyID) {
        case .found(let found): key = found
        case .unknown: return (.rejected(.unknownKey), nil, nil)
        case .unavailable(let retryAfter): return (.unavailable(retryAfterSeconds: retryAfter), nil, nil)
        }
        guard case .rsa = key.keyType else { return (.rejected(.algorithm), nil, nil) }
        guard key.verify(signature: jws.signature, message: jws.signingInput, algorithm: .rs256) else {
            return (.rejected(.signature), nil, nil)
        }

        guard let issuer = claims.issuer, Self.issuers.contains(issuer) else { return (.rejected(.issuer), nil, nil) }
        let clientIDs = policy.requirements.clientIDs
        guard let audience = claims.audiences.first(where: clientIDs.contains) else { return (.rejected(.audience), nil, nil) }
        if let azp = claims.authorizedParty, !clientIDs.contains(azp) { return (.rejected(.azp), nil, nil) }

        let current = now.timeIntervalSince1970
        guard current < claims.expiresAt + leeway, current - claims.issuedAt <= IdentityTokenBounds.maximumAgeSeconds + leeway
        else { return (.rejected(.expired), nil, nil) }
        guard claims.issuedAt <= current + leeway, (claims.notBefore ?? 0) <= current + leeway else {
            return (.rejected(.notYetValid), nil, nil)
        }
        guard nonceMatches(claims.nonce) else { return (.rejected(.nonce), nil, nil) }
        if let required = policy.requirements.hostedDomain,
           claims.hostedDomain.map({ $0.lowercased() == required.lowercased() }) != true {
            return (.rejected(.hostedDomain), nil, nil)
        }
        let verified = GoogleIdentityClaims(
            subject: claims.subject, email: claims.email, emailVerified: claims.emailVerified,
            hostedDomain: claims.hostedDomain, name: claims.name, picture: claims.picture, audience: audience,
            issuedAt: Date(timeIntervalSince1970: claims.issuedAt), expiresAt: Date(timeIntervalSince1970: claims.expiresAt))
        return (.verified(verified), claims, jws)
    }

    /// The `nonce` claim equals the nonce the app sent, byte for byte (Google does not hash it),
    /// compared in constant time. With `nonceRequired` both must be present; one without the
    /// other always fails, so a half-deployed nonce cannot silently pass.
    private func nonceMatches(_ claim: String?) -> Bool {
        let raw = policy.rawNonce.flatMap { $0.isEmpty ? nil : $0 }
        switch (raw, claim) {
        case (nil, nil): return !policy.nonceRequired
        case (nil, _?), (_?, nil): return false
        // Digests of equal length, so not even the nonce's length shows in the timing.
        case (let raw?, let claim?): return ConstantTime.equals(SHA256.hash(claim), SHA256.hash(raw))
        }
    }
}

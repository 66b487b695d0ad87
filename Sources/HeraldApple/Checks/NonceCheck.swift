import JOSE

/// The token's `nonce` claim is the lowercase hex SHA-256 of the raw nonce the app sent.
///
/// With `required` both must be present. Whenever both are present they must match. One
/// without the other always fails, so a half-deployed nonce cannot silently pass.
struct NonceCheck {
    let required: Bool
    /// The raw nonce; an empty string counts as absent.
    let rawNonce: String?

    func evaluate(claim: String?) -> AppleCheckOutcome {
        let raw = rawNonce.flatMap { $0.isEmpty ? nil : $0 }
        switch (raw, claim) {
        case (nil, nil):
            if required { return .failed(.nonce, detail: "the realm requires a nonce; the request and the token have none") }
            return .passed(detail: "no nonce sent and none in the token; the realm does not require one")
        case (nil, _?):
            return .failed(.nonce, detail: "the token has a nonce claim but no raw nonce was sent")
        case (_?, nil):
            return .failed(.nonce, detail: "a raw nonce was sent but the token has no nonce claim")
        case (let raw?, let claim?):
            let expected = SHA256.hexDigest(raw)
            if ConstantTime.equals(Array(claim.utf8), Array(expected.utf8)) {
                return .passed(detail: "nonce claim is the SHA-256 of the raw nonce")
            }
            return .failed(.nonce, detail: "nonce claim is not the lowercase hex SHA-256 of the raw nonce")
        }
    }
}

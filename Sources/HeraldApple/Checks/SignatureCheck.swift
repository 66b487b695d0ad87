import JOSE

/// The JWS signature verifies under the resolved key.
struct SignatureCheck {
    func evaluate(jws: CompactJWS, key: PublicKey, algorithm: JWSAlgorithm) -> AppleCheckOutcome {
        if key.verify(signature: jws.signature, message: jws.signingInput, algorithm: algorithm) {
            return .passed(detail: AppleCheckDetail { "\(algorithm.rawValue) signature verifies" })
        }
        return .failed(.signature, detail: "\(algorithm.rawValue) signature does not verify")
    }
}

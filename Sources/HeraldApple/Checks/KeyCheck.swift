import JOSE

/// `kid` is required and must resolve in Apple's JWKS.
struct KeyCheck {
    /// What resolving the kid gave.
    enum Resolution {
        case found(PublicKey, keyID: String)
        case notFound
        case unavailable(retryAfterSeconds: Int)
    }

    let source: any AppleSigningKeySource

    func evaluate(keyID: String?) async -> (AppleCheckOutcome, Resolution) {
        guard let keyID, !keyID.isEmpty else {
            return (.failed(.unknownKey, detail: "header has no kid"), .notFound)
        }
        switch await source.resolve(keyID) {
        case .found(let key):
            return (.passed(detail: AppleCheckDetail { "kid \(AlgorithmCheck.quoted(keyID)) found (\(key.keyType.displayName))" }),
                    .found(key, keyID: keyID))
        case .unknown:
            return (.failed(.unknownKey, detail: "kid \(AlgorithmCheck.quoted(keyID)) is not in Apple's JWKS, even after a refresh"),
                    .notFound)
        case .unavailable(let retryAfter):
            return (.skipped(detail: "kid \(AlgorithmCheck.quoted(keyID)) cannot be resolved: Apple's JWKS is unavailable and no cached key can decide"),
                    .unavailable(retryAfterSeconds: retryAfter))
        }
    }
}

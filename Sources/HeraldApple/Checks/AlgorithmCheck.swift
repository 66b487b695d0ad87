import JOSE

/// Header `alg` must be one Apple signs with (RS256 or ES256) and, once the key is known, fit
/// its type.
///
/// The contract orders `algorithm` before `unknown_key`, yet "matches the key type" needs the
/// key. So the decision has two stages: the allow-list runs before the key lookup (a `none`,
/// HS* or unknown alg fails `algorithm` even when the kid is missing or unknown, and never
/// triggers a JWKS fetch); the fit runs after the key is found (an RS256 header naming an EC
/// key fails `algorithm`, not `unknown_key`). A missing or unknown kid with an accepted alg
/// is `unknown_key`.
struct AlgorithmCheck {
    static let accepted: [String: JWSAlgorithm] = ["RS256": .rs256, "ES256": .es256]

    /// Stage one: the allow-list.
    func allowList(alg: String) -> (AppleCheckOutcome, JWSAlgorithm?) {
        guard let algorithm = Self.accepted[alg] else {
            return (.failed(.algorithm, detail: "alg \(Self.quoted(alg)) is not accepted; Apple signs with RS256 or ES256"), nil)
        }
        return (.passed(detail: AppleCheckDetail { "alg \(alg) is accepted" }), algorithm)
    }

    /// Stage two: the algorithm fits the resolved key's type.
    func fit(algorithm: JWSAlgorithm, keyType: KeyType, keyID: String) -> AppleCheckOutcome {
        let fits = switch (algorithm, keyType) {
        case (.rs256, .rsa): true
        case (.es256, .ecP256): true
        default: false
        }
        if fits {
            return .passed(detail: AppleCheckDetail { "alg \(algorithm.rawValue) fits key \(Self.quoted(keyID)) (\(keyType.displayName))" })
        }
        return .failed(.algorithm, detail: "alg \(algorithm.rawValue) does not fit key \(Self.quoted(keyID)) (\(keyType.displayName))")
    }

    /// Quotes a header value for a detail line, shortened so a hostile header cannot flood output.
    static func quoted(_ text: String) -> String {
        let limit = 64
        // The common case (a short printable ASCII kid or alg) without walking scalars.
        if text.utf8.count <= limit, text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return "\"" + text + "\"" }
        let shown = text.count > limit ? String(text.prefix(limit)) + "…" : text
        return "\"" + shown.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined() + "\""
    }
}

extension KeyType {
    /// "RSA 2048", "EC P-256", "Ed25519".
    var displayName: String {
        switch self {
        case .rsa(let bits): "RSA \(bits)"
        case .ecP256: "EC P-256"
        case .ed25519: "Ed25519"
        }
    }
}

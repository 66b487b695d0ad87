/// Why a JOSE operation failed. Codes can grow without breaking callers (swift-certificates
/// style); `reason` is fixed text that never contains the input, a key or a secret.
public struct JOSEError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; compare with the static members (`error.code == .malformed`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Backing: String, Sendable, Hashable {
            case malformed
            case unsupportedAlgorithm
            case unsupportedKeyType
            case keyAlgorithmMismatch
            case invalidKey
            case keyTooSmall
            case keyGenerationFailed
            case exportFailed
            case signingFailed
            case encryptionFailed
            case decryptionFailed
        }

        fileprivate let backing: Backing
        fileprivate init(_ backing: Backing) { self.backing = backing }

        /// Input that is not well-formed: base64url, JSON, JWS structure, sizes, PEM/DER.
        public static let malformed = Code(.malformed)
        /// An algorithm name this module does not implement (`none`, `HS256`, `RS512`, …).
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// A key type or curve this module does not implement (P-384, X25519, RSA-PSS, `oct`, …).
        public static let unsupportedKeyType = Code(.unsupportedKeyType)
        /// The algorithm does not fit the key (RS256 with an EC key, …).
        public static let keyAlgorithmMismatch = Code(.keyAlgorithmMismatch)
        /// Key material that is present but unusable (off-curve point, wrong length, bad exponent).
        public static let invalidKey = Code(.invalidKey)
        /// An RSA key below 2048 bits.
        public static let keyTooSmall = Code(.keyTooSmall)
        /// OpenSSL could not generate a key.
        public static let keyGenerationFailed = Code(.keyGenerationFailed)
        /// A key could not be serialized.
        public static let exportFailed = Code(.exportFailed)
        /// OpenSSL could not produce a signature.
        public static let signingFailed = Code(.signingFailed)
        /// AES-GCM sealing failed.
        public static let encryptionFailed = Code(.encryptionFailed)
        /// AES-GCM opening failed: wrong key, tampered ciphertext/tag/associated data, or too short.
        public static let decryptionFailed = Code(.decryptionFailed)

        /// The code's name, e.g. "malformed".
        public var description: String { backing.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// A fixed, human-readable explanation; safe to log.
    public let reason: String

    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Code and reason; contains no input data, so it is safe to log.
    public var description: String { "JOSEError(\(code)): \(reason)" }
}

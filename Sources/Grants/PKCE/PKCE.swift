import JOSE

/// RFC 7636 proof key checks. Only S256 exists here: `plain` gives no protection against a
/// stolen code, so it is refused.
public enum PKCE {
    /// The only accepted `code_challenge_method`.
    public static let method = "S256"
    static let lengthRange = 43...128

    /// Whether `text` is 43–128 characters of the unreserved set (RFC 7636 §4.1), which is
    /// what a verifier must be.
    public static func isValidVerifier(_ text: String) -> Bool {
        lengthRange.contains(text.utf8.count) && text.utf8.allSatisfy(isUnreserved)
    }

    /// Whether `text` can be an S256 challenge: 43–128 base64url characters (an S256
    /// challenge is exactly 43; longer ones are accepted as the contract allows but can never match).
    public static func isValidChallenge(_ text: String) -> Bool {
        lengthRange.contains(text.utf8.count) && text.utf8.allSatisfy(isBase64URL)
    }

    /// BASE64URL(SHA256(verifier)) == challenge, compared in constant time.
    public static func verify(verifier: String, challenge: String) -> Bool {
        guard isValidVerifier(verifier) else { return false }
        let computed = Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
        return ConstantTime.equals(Array(computed.utf8), Array(challenge.utf8))
    }

    /// The S256 challenge of `verifier` (for clients and tests).
    public static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == 0x2D || byte == 0x5F
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        isBase64URL(byte) || byte == 0x2E || byte == 0x7E
    }
}

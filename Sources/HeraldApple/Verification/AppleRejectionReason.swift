/// Why an Apple identity token was rejected; raw values are the wire `details.reason` values
/// of CONTRACT.md (`invalid_apple_token`), listed in the order the checks run.
public enum AppleRejectionReason: String, Sendable, Hashable, CaseIterable {
    case malformed
    case algorithm
    case unknownKey = "unknown_key"
    case signature
    case issuer
    case audience
    case expired
    case notYetValid = "not_yet_valid"
    case nonce
    case replayed
}

/// Why a Google ID token was refused; raw values are the wire `details.reason` values, listed
/// in the order the checks run.
public enum GoogleRejectionReason: String, Sendable, Hashable, CaseIterable {
    case malformed
    case algorithm
    case unknownKey = "unknown_key"
    case signature
    case issuer
    case audience
    /// `azp` is present and not one of the realm's client ids.
    case azp
    case expired
    case notYetValid = "not_yet_valid"
    case nonce
    /// The realm requires a Google Workspace domain and `hd` is not it.
    case hostedDomain = "hosted_domain"
    case replayed
}

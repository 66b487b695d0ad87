import COpenSSL

/// The asymmetric key types Herald supports.
public enum KeyType: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// RSA with the modulus size in bits (at least 2048).
    case rsa(bits: Int)
    /// ECDSA over NIST P-256 (prime256v1).
    case ecP256
    /// Ed25519.
    case ed25519

    /// Smallest RSA modulus accepted anywhere (NIST SP 800-131A).
    public static let minimumRSABits = 2048
    /// Largest RSA modulus accepted: bigger keys only make verification slow (a cheap DoS lever).
    public static let maximumRSABits = 8192

    /// The one JWS algorithm this module uses with this key type.
    public var algorithm: JWSAlgorithm {
        switch self {
        case .rsa: .rs256
        case .ecP256: .es256
        case .ed25519: .edDSA
        }
    }

    /// "RSA-2048", "EC P-256" or "Ed25519".
    public var description: String {
        switch self {
        case .rsa(let bits): "RSA-\(bits)"
        case .ecP256: "EC P-256"
        case .ed25519: "Ed25519"
        }
    }

    /// Classifies an OpenSSL key, rejecting types, curves and sizes this module does not use.
    static func of(_ pkey: OpaquePointer) throws(JOSEError) -> KeyType {
        if EVP_PKEY_is_a(pkey, "RSA") == 1 {
            let bits = Int(EVP_PKEY_get_bits(pkey))
            guard bits >= minimumRSABits else { throw JOSEError(.keyTooSmall, "RSA keys must have at least 2048 bits") }
            guard bits <= maximumRSABits else { throw JOSEError(.unsupportedKeyType, "RSA keys above 8192 bits are not supported") }
            return .rsa(bits: bits)
        }
        if EVP_PKEY_is_a(pkey, "EC") == 1 {
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_utf8_string_param(pkey, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1 else {
                ERR_clear_error()
                throw JOSEError(.unsupportedKeyType, "EC key without a named curve")
            }
            let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard curve == "prime256v1" || curve == "P-256" else { throw JOSEError(.unsupportedKeyType, "only the P-256 curve is supported") }
            return .ecP256
        }
        if EVP_PKEY_is_a(pkey, "ED25519") == 1 {
            return .ed25519
        }
        throw JOSEError(.unsupportedKeyType, "key type is not RSA, EC P-256 or Ed25519")
    }
}

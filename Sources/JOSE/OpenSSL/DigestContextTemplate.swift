import COpenSSL

/// An EVP_MD_CTX initialised once for signing or verifying with one key and one digest, copied
/// for each operation. Initialising costs OpenSSL 3.0 a fetch of the signature implementation (a
/// lock and a method-store lookup: about 3 µs alone, more under contention, and about 5% of a
/// native login's server CPU for its three signature operations); copying an initialised context
/// costs about 0.2 µs.
///
/// `@unchecked Sendable` because OpaquePointer is not Sendable. Sharing is safe: the template is
/// never used for an operation itself, only read as the `const` source of EVP_MD_CTX_copy_ex, and
/// openssl-threads(7) makes an object safe to use from several threads when every call takes it
/// as `const`.
final class DigestContextTemplate: @unchecked Sendable {
    enum Operation { case sign, verify }

    private let context: OpaquePointer

    /// A template for `operation` with `pkey` (which the context keeps a reference to) and
    /// `digestName` (nil for Ed25519, which hashes internally); nil when OpenSSL refuses.
    init?(_ operation: Operation, pkey: OpaquePointer, digestName: String?) {
        guard let context = EVP_MD_CTX_new() else { return nil }
        let initialised = switch operation {
        case .sign: EVP_DigestSignInit_ex(context, nil, digestName, nil, nil, pkey, nil)
        case .verify: EVP_DigestVerifyInit_ex(context, nil, digestName, nil, nil, pkey, nil)
        }
        guard initialised == 1 else {
            ERR_clear_error()
            EVP_MD_CTX_free(context)
            return nil
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Runs `body` with a fresh copy of the template, ready for one EVP_DigestSign or
    /// EVP_DigestVerify, and frees it afterwards; nil when the copy fails.
    func withContext<R>(_ body: (OpaquePointer) -> R) -> R? {
        guard let copy = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(copy) }
        guard EVP_MD_CTX_copy_ex(copy, context) == 1 else {
            ERR_clear_error()
            return nil
        }
        return body(copy)
    }
}

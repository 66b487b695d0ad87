import COpenSSL

/// OpenSSL algorithm implementations fetched once per process. Fetching by name on every call
/// costs a lock and a method-store lookup; fetched EVP_MD/EVP_MAC/EVP_CIPHER objects are
/// immutable and documented as safe to share between threads. They live as long as the process.
///
/// `nonisolated(unsafe)` only because OpaquePointer is not Sendable: each `static let` is
/// initialized exactly once (Swift guarantees thread-safe lazy initialization of globals) and
/// never reassigned, and OpenSSL allows concurrent use of a fetched algorithm object.
enum FetchedAlgorithms {
    nonisolated(unsafe) static let sha256: OpaquePointer = {
        guard let md = EVP_MD_fetch(nil, "SHA256", nil) else { fatalError("OpenSSL has no SHA256 implementation") }
        return md
    }()

    nonisolated(unsafe) static let hmac: OpaquePointer = {
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { fatalError("OpenSSL has no HMAC implementation") }
        return mac
    }()

    nonisolated(unsafe) static let aes256GCM: OpaquePointer = {
        guard let cipher = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else { fatalError("OpenSSL has no AES-256-GCM implementation") }
        return cipher
    }()
}

/// Calls `body` with a base address that is never nil, even for an empty array: several
/// OpenSSL functions reject a NULL pointer even when the length is zero.
@inline(__always)
func withNonNullBytes<R, E: Error>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) throws(E) -> R) throws(E) -> R {
    if bytes.isEmpty {
        var placeholder: UInt8 = 0
        return try withUnsafePointer(to: &placeholder) { (pointer) throws(E) -> R in try body(pointer, 0) }
    }
    return try bytes.withUnsafeBufferPointer { (buffer) throws(E) -> R in try body(buffer.baseAddress!, buffer.count) }
}

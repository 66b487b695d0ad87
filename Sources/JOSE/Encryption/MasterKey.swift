import Foundation

/// The 32-byte key that encrypts secrets at rest (signing keys, Apple private keys). `context`
/// is bound as AES-GCM associated data so a ciphertext cannot be moved to another row/purpose.
public struct MasterKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    private let bytes: [UInt8]

    /// A master key from exactly 32 raw bytes.
    public init(bytes: [UInt8]) throws(JOSEError) {
        guard bytes.count == AESGCM.keyByteCount else { throw JOSEError(.invalidKey, "master key must be 32 bytes") }
        self.bytes = bytes
    }

    /// A master key from text: 64 hex characters, or base64url / standard base64 of 32 bytes.
    /// Surrounding whitespace (a key file's trailing newline) is ignored.
    public init(encoded: String) throws(JOSEError) {
        let text = encoded.trimmingCharacters(in: .whitespacesAndNewlines)
        if text.utf8.count == 64, let decoded = Hex.decode(text) {
            try self.init(bytes: decoded)
        } else if let decoded = Base64URL.decode(text) {
            try self.init(bytes: decoded)
        } else if let data = Data(base64Encoded: text) {
            try self.init(bytes: [UInt8](data))
        } else {
            throw JOSEError(.invalidKey, "master key must be 64 hex characters or base64 of 32 bytes")
        }
    }

    /// A new random master key.
    public static func generate() -> MasterKey {
        MasterKey(uncheckedBytes: SecureRandom.bytes(count: AESGCM.keyByteCount))
    }

    private init(uncheckedBytes: [UInt8]) { self.bytes = uncheckedBytes }

    /// The key as base64url, for the key file.
    public var encoded: String { Base64URL.encode(bytes) }

    /// Encrypts `plaintext` bound to `context` (e.g. "signing-key:<realm>:<kid>").
    public func seal(_ plaintext: [UInt8], context: String) -> [UInt8] {
        do {
            return try AESGCM.seal(key: bytes, plaintext: plaintext, associatedData: Array(context.utf8))
        } catch {
            // The key length is checked at init, so only an OpenSSL-internal failure lands here;
            // storing a secret unencrypted instead is not an option.
            fatalError("AES-256-GCM seal failed: \(error.code)")
        }
    }

    /// Decrypts a box sealed with the same key and the same `context`.
    public func open(_ sealed: [UInt8], context: String) throws(JOSEError) -> [UInt8] {
        try AESGCM.open(key: bytes, sealed: sealed, associatedData: Array(context.utf8))
    }

    /// Redacted, so a key printed by accident is not a key leaked.
    public var description: String { "MasterKey(redacted)" }
    /// Redacted as well.
    public var debugDescription: String { description }
}

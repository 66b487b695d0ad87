import Foundation
import JOSE
import Storage

/// A refresh token as `refresh_tokens` knows it: the row it is looked up by (`lookup`, stored
/// in `token_hash`) and what proves the presenter holds it.
///
/// Tokens are `selector.verifier`: a 16-byte selector (6 bytes of the issue time in
/// milliseconds, then 80 random bits) and a 32-byte verifier, both base64url (66 characters).
/// The row is keyed by the selector and keeps SHA-256 of the verifier (`verifier_hash`),
/// compared in constant time.
///
/// Why: keyed by SHA-256 of the whole token, every login and refresh inserted its row at a
/// random leaf of the key's index, a page written to the WAL and copied back at checkpoint per
/// token (issue #39). A selector that starts with the time lands at the index's right edge, on
/// a page the other tokens of the same commit dirtied too. The selector alone proves nothing,
/// so a refusal, a rotation and a reuse revocation all wait for the verifier.
///
/// Tokens issued before (43 characters, no dot) keep working: their row is keyed by SHA-256 of
/// the token and has no `verifier_hash`; the hash itself is the proof.
struct RefreshToken: Sendable {
    /// The text handed to the client; never stored, never logged.
    let text: String
    /// `refresh_tokens.token_hash`: the selector, or SHA-256 of a token of the old form.
    let lookup: [UInt8]
    /// SHA-256 of the verifier; nil for a token of the old form.
    let verifierHash: [UInt8]?

    static let selectorBytes = 16
    static let verifierBytes = 32
    /// The longest text worth parsing or hashing: both forms are far shorter.
    static let maxLength = 512

    /// A new token issued at `date`.
    static func make(at date: Date) -> RefreshToken {
        let selector = CreationTimePrefix.bytes(at: date)
            + SecureRandom.bytes(count: selectorBytes - CreationTimePrefix.byteCount)
        let verifier = SecureRandom.token(byteCount: verifierBytes)
        return RefreshToken(text: Base64URL.encode(selector) + "." + verifier, lookup: selector,
                            verifierHash: SHA256.hash(Array(verifier.utf8)))
    }

    /// The token a client presented; nil when it cannot be one (too long, a malformed selector).
    /// Text without a dot is taken for the old form.
    init?(presented text: String) {
        guard text.utf8.count <= Self.maxLength else { return nil }
        guard let dot = text.firstIndex(of: ".") else {
            self.init(text: text, lookup: SHA256.hash(Array(text.utf8)), verifierHash: nil)
            return
        }
        let selectorText = text[..<dot]
        let verifier = text[text.index(after: dot)...]
        // Canonical encodings only: one token has one text.
        guard let selector = Base64URL.decode(selectorText), selector.count == Self.selectorBytes,
              Base64URL.encode(selector) == selectorText, !verifier.isEmpty
        else { return nil }
        self.init(text: text, lookup: selector, verifierHash: SHA256.hash(Array(verifier.utf8)))
    }

    private init(text: String, lookup: [UInt8], verifierHash: [UInt8]?) {
        self.text = text
        self.lookup = lookup
        self.verifierHash = verifierHash
    }

    /// Whether `row` (with its `verifier_hash` column), found by `lookup`, is this token's: the
    /// verifier's hash equals the stored one in constant time; a token of the old form matches
    /// only a row of the old form.
    func isHeld(by row: Row) throws -> Bool {
        let stored = try row.optionalBytes("verifier_hash")
        switch (verifierHash, stored) {
        case (nil, nil): return true
        case (let presented?, let stored?): return ConstantTime.equals(presented, stored)
        default: return false
        }
    }
}

import Foundation
import JOSE

/// Session ids that sort by creation time: 12 hex digits of the creation time in milliseconds,
/// then 96 random bits (base64url), 28 characters.
///
/// Why: the indexes keyed by session id (`sessions`' primary key, `refresh_tokens_session`)
/// then take each new session at their right edge, on a page the previous logins already
/// dirtied, instead of on a random page each (issue #39: with random ids every login dirtied a
/// leaf of each, written to the WAL and copied back at checkpoint). An id is still
/// unguessable, and ids made before (22 random characters) keep working: nothing parses one.
enum SessionID {
    static func make(at date: Date) -> String {
        Hex.encode(CreationTimePrefix.bytes(at: date)) + SecureRandom.token(byteCount: 12)
    }
}

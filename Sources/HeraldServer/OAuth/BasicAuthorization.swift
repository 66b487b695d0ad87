import Foundation
import Grants
import HTTPServer

/// HTTP Basic client authentication at the OAuth endpoints (`client_secret_basic`, RFC 6749
/// §2.3.1): `Basic base64(urlencode(client_id):urlencode(client_secret))`.
enum BasicAuthorization {
    /// The decoded client id and secret of an `Authorization` header; nil when there is no
    /// header or it has another scheme (a Bearer header is not client authentication).
    /// Throws `invalidClient` for a malformed Basic header.
    static func credentials(_ header: String?) throws(GrantsError) -> (clientID: String, secret: String)? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else { return nil }
        let encoded = String(parts[1].trimmingOptionalWhitespace)
        guard encoded.utf8.count <= 2048, let decoded = Data(base64Encoded: encoded),
              let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":"),
              let clientID = FormDecoding.decode(text[..<colon]),
              let secret = FormDecoding.decode(text[text.index(after: colon)...]), !clientID.isEmpty
        else { throw GrantsError(.invalidClient, "malformed Basic credentials") }
        return (clientID, secret)
    }
}

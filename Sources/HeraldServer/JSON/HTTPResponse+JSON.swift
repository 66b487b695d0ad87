import Foundation
import HTTPServer
import JOSE

extension HTTPResponse {
    /// A JSON response from an `Encodable` value (camelCase keys as declared).
    static func json<Value: Encodable>(status: Int = 200, _ value: Value, noStore: Bool = false) -> HTTPResponse {
        let body: [UInt8]
        do {
            body = Array(try JSONBodyEncoder.shared.encode(value))
        } catch {
            // Encoding our own value types cannot fail; if it ever does, answer a bare 500.
            return HTTPResponse(status: 500, headers: HTTPHeaders([("Content-Type", "application/json")]),
                                body: Array(#"{"status":500,"code":"internal_error","message":"Internal server error"}"#.utf8))
        }
        return json(status: status, body: body, noStore: noStore)
    }

    /// A JSON response from a `JSONValue`, written by JOSE's `JSONWriter` (sorted keys, as the
    /// `Encodable` form): the answers of logins and refreshes, where `JSONEncoder` was several
    /// per cent of the CPU.
    static func json(status: Int = 200, _ value: JSONValue, noStore: Bool = false) -> HTTPResponse {
        json(status: status, body: value.serialized(), noStore: noStore)
    }

    /// A response whose body is already JSON (`SessionTokensResponse.body`, `MeResponse.body`).
    static func json(status: Int = 200, body: [UInt8], noStore: Bool = false) -> HTTPResponse {
        var headers = HTTPHeaders([("Content-Type", "application/json")])
        if noStore {
            headers.set("Cache-Control", "no-store")
            headers.set("Pragma", "no-cache")
        }
        return HTTPResponse(status: status, headers: headers, body: body)
    }

    /// A plain-text response (Prometheus metrics, YAML).
    static func text(_ text: String, contentType: String, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", contentType)]), body: Array(text.utf8))
    }
}

/// One configured encoder: JSONEncoder is thread-safe for `encode`, and reusing it avoids
/// rebuilding its options per response.
enum JSONBodyEncoder {
    static let shared: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
}

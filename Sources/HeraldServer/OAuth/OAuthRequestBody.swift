import Grants
import HTTPServer
import JOSE

/// The parameters of an OAuth POST: `application/x-www-form-urlencoded` (RFC 6749) or a JSON
/// object of strings. A repeated parameter is `invalid_request` (RFC 6749 §3.2).
struct OAuthRequestBody: Sendable {
    let parameters: [String: String]

    static let maxValueBytes = 8192

    init(_ request: HTTPRequest) throws(GrantsError) {
        let media = request.mediaType
        var parameters: [String: String] = [:]
        if media == "application/json" {
            guard case .object(let object)? = try? JSONValue.parse(request.body) else {
                throw GrantsError(.invalidRequest, "body must be a JSON object")
            }
            for (name, value) in object {
                switch value {
                case .string(let text): parameters[name] = text
                case .null: continue
                default: throw GrantsError(.invalidRequest, "\(name.prefix(64)) must be a string")
                }
            }
        } else if media == "application/x-www-form-urlencoded" || (media.isEmpty && request.body.isEmpty) {
            guard let pairs = FormDecoding.pairs(request.body) else {
                throw GrantsError(.invalidRequest, "body is not valid form encoding")
            }
            for (name, value) in pairs {
                guard parameters[name] == nil else { throw GrantsError(.invalidRequest, "\(name.prefix(64)) is repeated") }
                parameters[name] = value
            }
        } else {
            throw GrantsError(.invalidRequest, "Content-Type must be application/x-www-form-urlencoded or application/json")
        }
        for (name, value) in parameters where value.utf8.count > Self.maxValueBytes || value.unicodeScalars.contains(where: { $0.value == 0 }) {
            throw GrantsError(.invalidRequest, "\(name.prefix(64)) is too long or malformed")
        }
        self.parameters = parameters
    }

    subscript(_ name: String) -> String? {
        parameters[name].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A required parameter, or `invalid_request` naming it.
    func required(_ name: String) throws(GrantsError) -> String {
        guard let value = self[name] else { throw GrantsError(.invalidRequest, "\(name) is required") }
        return value
    }
}

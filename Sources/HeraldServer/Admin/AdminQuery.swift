import HTTPServer
import Realms

/// Reads list parameters from the query string, collecting every problem by parameter name.
struct AdminQuery {
    let request: HTTPRequest
    private(set) var problems: [String: String] = [:]

    init(_ request: HTTPRequest) {
        self.request = request
    }

    /// `limit` and `cursor` as a page request.
    mutating func page() -> PageRequest {
        var limit: Int?
        if let text = request.query("limit") {
            if let number = Int(text), (1...PageRequest.maxLimit).contains(number) {
                limit = number
            } else {
                problems["limit"] = "must be an integer from 1 to \(PageRequest.maxLimit)"
            }
        }
        let cursor = text("cursor", maxLength: 512)
        do {
            return try PageRequest(limit: limit, cursor: cursor)
        } catch {
            for issue in error.fieldIssues { problems[issue.field] = issue.reason }
            return .first
        }
    }

    /// A bounded text parameter, nil when absent or empty.
    mutating func text(_ name: String, maxLength: Int) -> String? {
        guard let value = request.query(name), !value.isEmpty else { return nil }
        guard value.utf8.count <= maxLength else {
            problems[name] = "must be at most \(maxLength) bytes"
            return nil
        }
        return value
    }

    /// A parameter that must be one of an enumeration's raw values.
    mutating func enumeration<Value: RawRepresentable & CaseIterable>(_ name: String, _ type: Value.Type) -> Value?
    where Value.RawValue == String {
        guard let text = text(name, maxLength: 64) else { return nil }
        guard let value = Value(rawValue: text) else {
            problems[name] = "must be one of: " + Value.allCases.map(\.rawValue).joined(separator: ", ")
            return nil
        }
        return value
    }

    /// Throws one 400 naming every bad parameter.
    func validate() throws(APIError) {
        if !problems.isEmpty { throw APIError.invalidFields(problems) }
    }
}

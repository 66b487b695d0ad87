import HTTPServer
import JOSE

/// A request's JSON object body, read field by field with bounds. Every problem is collected
/// by field name so one 400 can name them all (`details.fields`); unknown fields are refused
/// when the caller lists the fields it accepts, so typos do not pass silently.
public struct JSONRequestBody: Sendable {
    public let object: [String: JSONValue]
    public private(set) var problems: [String: String] = [:]

    /// Parses `request.body` as one JSON object (strict: duplicate keys and bad UTF-8 refused).
    public init(_ request: HTTPRequest, allowedFields: Set<String>? = nil) throws(APIError) {
        if let type = request.headers["Content-Type"], !JSONRequestBody.isJSON(type) {
            throw APIError(status: 415, code: "unsupported_media_type", message: "Content-Type must be application/json")
        }
        guard !request.body.isEmpty else { throw APIError.badRequest("Request body must be a JSON object") }
        let value: JSONValue
        do {
            value = try JSONValue.parse(request.body)
        } catch {
            throw APIError.badRequest("Request body is not valid JSON")
        }
        guard case .object(let object) = value else { throw APIError.badRequest("Request body must be a JSON object") }
        self.object = object
        if let allowedFields {
            for key in object.keys where !allowedFields.contains(key) {
                problems[String(key.prefix(64))] = "unknown field"
            }
        }
    }

    static func isJSON(_ contentType: String) -> Bool {
        let media = HTTPRequest.mediaType(of: contentType)
        return media == "application/json" || (media.hasPrefix("application/") && media.hasSuffix("+json"))
    }

    /// Throws one 400 naming every field that failed.
    public func validate() throws(APIError) {
        if !problems.isEmpty { throw APIError.invalidFields(problems) }
    }

    public mutating func problem(_ field: String, _ text: String) { problems[field] = text }

    /// A string field: absent → nil (or a problem when required); wrong type or over `maxLength` → problem.
    public mutating func string(_ field: String, required: Bool = false, maxLength: Int = 1024,
                                allowEmpty: Bool = false) -> String? {
        switch object[field] {
        case nil, .some(.null):
            if required { problems[field] = "is required" }
            return nil
        case .some(.string(let text)):
            if text.utf8.count > maxLength { problems[field] = "must be at most \(maxLength) bytes"; return nil }
            if !allowEmpty && text.isEmpty { problems[field] = "must not be empty"; return nil }
            // In UTF-8 only U+0000 has a zero byte. Scanned as contiguous bytes: an identity
            // token is ~1 KB, and walking the UTF-8 view byte by byte showed in a login's profile.
            var scanned = text
            if scanned.withUTF8({ $0.contains(0) }) { problems[field] = "must not contain NUL"; return nil }
            return text
        default:
            problems[field] = "must be a string"
            return nil
        }
    }

    public mutating func bool(_ field: String, required: Bool = false) -> Bool? {
        switch object[field] {
        case nil, .some(.null):
            if required { problems[field] = "is required" }
            return nil
        case .some(.bool(let flag)): return flag
        default:
            problems[field] = "must be a boolean"
            return nil
        }
    }

    /// An integer field within `range`.
    public mutating func integer(_ field: String, required: Bool = false, in range: ClosedRange<Int>) -> Int? {
        switch object[field] {
        case nil, .some(.null):
            if required { problems[field] = "is required" }
            return nil
        case .some(.number(let number)):
            // Int(exactly:) rather than Int(_:): Double(range.upperBound) rounds Int.max up to
            // 2^63, which passes the comparison and would trap the conversion.
            guard number.rounded() == number, number >= Double(range.lowerBound), number <= Double(range.upperBound),
                  let value = Int(exactly: number), range.contains(value) else {
                problems[field] = "must be an integer from \(range.lowerBound) to \(range.upperBound)"
                return nil
            }
            return value
        default:
            problems[field] = "must be an integer"
            return nil
        }
    }

    /// An array of strings, each bounded, at most `maxCount` entries.
    public mutating func strings(_ field: String, required: Bool = false, maxCount: Int = 50,
                                 maxLength: Int = 512) -> [String]? {
        switch object[field] {
        case nil, .some(.null):
            if required { problems[field] = "is required" }
            return nil
        case .some(.array(let items)):
            guard items.count <= maxCount else { problems[field] = "must have at most \(maxCount) entries"; return nil }
            var result: [String] = []
            for item in items {
                guard case .string(let text) = item, !text.isEmpty, text.utf8.count <= maxLength,
                      !text.unicodeScalars.contains(where: { $0.value == 0 }) else {
                    problems[field] = "must be an array of non-empty strings of at most \(maxLength) bytes"
                    return nil
                }
                result.append(text)
            }
            return result
        default:
            problems[field] = "must be an array of strings"
            return nil
        }
    }

    /// A nested object, for callers that read it with another `JSONRequestBody`-like pass.
    public mutating func object(_ field: String) -> [String: JSONValue]? {
        switch object[field] {
        case nil, .some(.null): return nil
        case .some(.object(let nested)): return nested
        default:
            problems[field] = "must be an object"
            return nil
        }
    }
}

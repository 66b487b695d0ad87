import JOSE
import Realms

/// Readers the admin API needs beyond the core's: enumerations, explicit `null` (which clears
/// a field on PATCH), nested objects with their own unknown-field check.
extension JSONRequestBody {
    /// True when the field is present with the value `null`.
    func isExplicitNull(_ field: String) -> Bool { object[field] == .some(.null) }

    /// Records a problem for each field sent as `null` that cannot be cleared, so `null`
    /// is never silently taken for "leave unchanged".
    mutating func refuseNull(_ fields: [String]) {
        for field in fields where isExplicitNull(field) { problem(field, "must not be null") }
    }

    /// A string field that must be one of an enumeration's raw values.
    mutating func enumeration<Value: RawRepresentable & CaseIterable>(_ field: String, _ type: Value.Type) -> Value?
    where Value.RawValue == String {
        guard let text = string(field, maxLength: 64) else { return nil }
        guard let value = Value(rawValue: text) else {
            problem(field, "must be one of: " + Value.allCases.map(\.rawValue).joined(separator: ", "))
            return nil
        }
        return value
    }

    /// A nullable integer: absent → nil, `null` → `.some(nil)`, a number in range → the value.
    mutating func nullableInteger(_ field: String, in range: ClosedRange<Int>) -> Int?? {
        if isExplicitNull(field) { return .some(nil) }
        return integer(field, in: range).map { .some($0) }
    }

    /// A nullable string: absent → nil, `null` → `.some(nil)`, else the bounded string.
    mutating func nullableString(_ field: String, maxLength: Int) -> String?? {
        if isExplicitNull(field) { return .some(nil) }
        return string(field, maxLength: maxLength).map { .some($0) }
    }

    /// Reads a nested object's members with `read`, naming problems `field.member` and
    /// refusing members not in `allowed`.
    mutating func nested(_ field: String, allowed: Set<String>,
                         _ read: (_ members: [String: JSONValue], _ problem: (String, String) -> Void) -> Void) {
        guard let members = object(field) else { return }
        var found: [(String, String)] = []
        for key in members.keys where !allowed.contains(key) { found.append(("\(field).\(key.prefix(64))", "unknown field")) }
        read(members) { member, text in found.append(("\(field).\(member)", text)) }
        for (name, text) in found { problem(name, text) }
    }

    /// An integer JSON value within `range`, or nil.
    static func integer(_ value: JSONValue?, in range: ClosedRange<Int>) -> Int? {
        // Int(exactly:): see JSONRequestBody.integer(_:required:in:).
        guard case .number(let number)? = value, number.rounded() == number,
              number >= Double(range.lowerBound), number <= Double(range.upperBound),
              let integer = Int(exactly: number), range.contains(integer)
        else { return nil }
        return integer
    }

    /// Adds the domain's field problems (ranges, formats) to the body's own.
    mutating func add(_ issues: [FieldIssue]) {
        for issue in issues where problems[issue.field] == nil { problem(issue.field, issue.reason) }
    }
}

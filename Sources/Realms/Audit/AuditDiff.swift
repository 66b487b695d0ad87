import Foundation
import JOSE

/// Computes the field-by-field difference of two representations of a resource for the
/// audit log. Representations never hold secrets; keys that name a secret are redacted
/// anyway, so a future field cannot leak through the audit log by accident.
public enum AuditDiff {
    /// What the audit log shows instead of a secret.
    public static let redacted = "[redacted]"
    /// Keys whose values never reach the audit log.
    public static let secretKeys: Set<String> = [
        "privateKey", "clientSecret", "secret", "secretHash", "tokenHash", "token", "privateKeyPem",
    ]
    /// Bookkeeping fields left out of diffs.
    static let ignoredKeys: Set<String> = ["createdAt", "updatedAt"]

    /// The changed fields between `before` and `after` (either nil for a create or a delete).
    public static func changes(before: (any Encodable)?, after: (any Encodable)?) -> [String: FieldChange] {
        let old = before.map(object(of:)) ?? [:]
        let new = after.map(object(of:)) ?? [:]
        var result: [String: FieldChange] = [:]
        for key in Set(old.keys).union(new.keys) where !ignoredKeys.contains(key) {
            let was = old[key] ?? .null
            let now = new[key] ?? .null
            if was != now || before == nil || after == nil {
                result[key] = FieldChange(before: before == nil ? .null : was, after: after == nil ? .null : now)
            }
        }
        return result
    }

    /// A value as a JSON object with secret-named keys redacted at every depth.
    static func object(of value: any Encodable) -> [String: JSONValue] {
        guard let data = try? JSONEncoder().encode(value),
              let object = try? JSONDecoder().decode([String: JSONValue].self, from: data)
        else { return [:] }
        return object.reduce(into: [:]) { result, pair in result[pair.key] = redact(pair.value, key: pair.key) }
    }

    static func redact(_ value: JSONValue, key: String) -> JSONValue {
        if secretKeys.contains(key), value != .null { return .string(redacted) }
        switch value {
        case .object(let members):
            return .object(members.reduce(into: [:]) { result, pair in result[pair.key] = redact(pair.value, key: pair.key) })
        case .array(let items):
            return .array(items.map { redact($0, key: "") })
        default:
            return value
        }
    }
}

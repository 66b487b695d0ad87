import JOSE

/// String lists stored as JSON text columns (audiences, scopes, redirect URIs).
///
/// JOSE's JSON reader and writer, not Foundation's coders: these columns are decoded on every
/// native login (a provider's audiences, a client's scopes), where Foundation's decoder cost
/// several percent of a login's CPU.
enum JSONColumn {
    static func encode(_ values: [String]) -> String {
        String(decoding: JSONValue.array(values.map(JSONValue.string)).serialized(), as: UTF8.self)
    }

    /// The strings of a JSON array; an unreadable value reads as an empty list.
    static func decodeStrings(_ text: String) -> [String] {
        guard let items = (try? JSONValue.parse(Array(text.utf8)))?.arrayValue else { return [] }
        return items.compactMap(\.stringValue)
    }
}

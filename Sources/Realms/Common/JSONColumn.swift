import JOSE
import Storage

/// String lists stored as JSON text columns (audiences, scopes, redirect URIs).
///
/// JOSE's JSON reader and writer, not Foundation's coders: these columns are decoded on every
/// native login (a provider's audiences, a client's scopes), where Foundation's decoder cost
/// several percent of a login's CPU.
enum JSONColumn {
    static func encode(_ values: [String]) -> String {
        String(decoding: JSONValue.array(values.map(JSONValue.string)).serialized(), as: UTF8.self)
    }

    /// The strings of the JSON array stored in `column` of `row`. Herald only writes arrays of
    /// strings there, so anything else is damaged stored data: it throws (`typeMismatch`, naming
    /// the column, never the value) rather than reading as an empty list, which would silently
    /// take a client's scopes or a provider's audiences away.
    static func strings(_ row: Row, _ column: String) throws(StorageError) -> [String] {
        let text = try row.string(column)
        guard let items = (try? JSONValue.parse(Array(text.utf8)))?.arrayValue else {
            throw unreadable(column)
        }
        var strings: [String] = []
        strings.reserveCapacity(items.count)
        for item in items {
            guard let string = item.stringValue else { throw unreadable(column) }
            strings.append(string)
        }
        return strings
    }

    private static func unreadable(_ column: String) -> StorageError {
        StorageError(code: .typeMismatch, message: "column '\(column)' holds unreadable JSON, expected an array of strings")
    }
}

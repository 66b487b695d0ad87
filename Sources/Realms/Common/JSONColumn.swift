import Foundation

/// String lists stored as JSON text columns (audiences, scopes, redirect URIs).
enum JSONColumn {
    static func encode(_ values: [String]) -> String {
        // Encoding [String] cannot fail.
        let data = (try? JSONEncoder().encode(values)) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeStrings(_ text: String) -> [String] {
        (try? JSONDecoder().decode([String].self, from: Data(text.utf8))) ?? []
    }
}

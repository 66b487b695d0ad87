import JOSE

/// Encodes and decodes opaque list cursors: base64url of the last row's key, tagged by list
/// so a cursor of one list is refused by another.
enum ListCursor {
    static func encode(list: String, key: String) -> String {
        Base64URL.encode(Array("\(list):\(key)".utf8))
    }

    static func encode(list: String, key: Int64) -> String {
        encode(list: list, key: String(key))
    }

    /// The key of a cursor of `list`; throws `invalidInput` naming `cursor` otherwise.
    static func decode(_ cursor: String, list: String) throws(RealmsError) -> String {
        guard let bytes = Base64URL.decode(cursor), let text = String(bytes: bytes, encoding: .utf8),
              text.hasPrefix(list + ":")
        else { throw RealmsError.invalid(field: "cursor", "is not a cursor from this list") }
        return String(text.dropFirst(list.count + 1))
    }

    static func decodeInteger(_ cursor: String, list: String) throws(RealmsError) -> Int64 {
        guard let key = Int64(try decode(cursor, list: list)) else {
            throw RealmsError.invalid(field: "cursor", "is not a cursor from this list")
        }
        return key
    }
}

/// One page of a list: the items and the opaque cursor of the next page (nil at the end).
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let nextCursor: String?

    public init(items: [Item], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }
}

extension Page: Equatable where Item: Equatable {}

/// What page a list call asks for: `limit` (1…200, default 50) and an opaque cursor from a
/// previous page. Cursors are base64url of the last row's key, so pages stay stable while
/// rows are inserted (keyset pagination, no offsets).
public struct PageRequest: Sendable, Equatable {
    public static let defaultLimit = 50
    public static let maxLimit = 200

    public let limit: Int
    public let cursor: String?

    /// Validates the limit; throws `invalidInput` naming `limit`.
    public init(limit: Int? = nil, cursor: String? = nil) throws(RealmsError) {
        let limit = limit ?? Self.defaultLimit
        guard (1...Self.maxLimit).contains(limit) else {
            throw RealmsError.invalid(field: "limit", "must be between 1 and \(Self.maxLimit)")
        }
        if let cursor, cursor.utf8.count > 512 {
            throw RealmsError.invalid(field: "cursor", "is not a cursor from this list")
        }
        self.limit = limit
        self.cursor = cursor
    }

    /// The first page with the default limit.
    public static let first = PageRequest(uncheckedLimit: defaultLimit)

    private init(uncheckedLimit: Int) {
        limit = uncheckedLimit
        cursor = nil
    }
}

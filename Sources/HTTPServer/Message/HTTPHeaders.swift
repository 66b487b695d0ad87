/// HTTP header fields: names compare case-insensitively (ASCII), order is kept and a name may
/// repeat.
public struct HTTPHeaders: Sendable, Sequence, Equatable, ExpressibleByDictionaryLiteral {
    /// One header field as received or to be sent.
    public typealias Element = (name: String, value: String)

    private var fields: [Element]

    /// An empty header set.
    public init() {
        fields = []
    }

    /// Headers from name/value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { (name: $0.0, value: $0.1) }
    }

    /// Headers from a literal such as `["Content-Type": "application/json"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of `name`, or nil.
    public subscript(_ name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether at least one field is called `name`.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.sameName($0.name, name) }
    }

    /// Appends a field, keeping any existing ones with the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field called `name` with this one (at the first one's position).
    public mutating func set(_ name: String, _ value: String) {
        guard let first = fields.firstIndex(where: { Self.sameName($0.name, name) }) else {
            fields.append((name: name, value: value))
            return
        }
        fields[first] = (name: name, value: value)
        var index = fields.index(after: first)
        while index < fields.endIndex {
            if Self.sameName(fields[index].name, name) {
                fields.remove(at: index)
            } else {
                index = fields.index(after: index)
            }
        }
    }

    /// Removes every field called `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.sameName($0.name, name) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Element]> {
        fields.makeIterator()
    }

    /// Equal when the same fields appear in the same order (names compared case-insensitively).
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { sameName($0.name, $1.name) && $0.value == $1.value }
    }

    /// Field names are ASCII tokens, so an ASCII fold avoids allocating lowercased copies.
    static func sameName(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        for (p, q) in zip(x, y) where p != q {
            guard asciiLower(p) == asciiLower(q) else { return false }
        }
        return true
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}

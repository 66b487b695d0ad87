/// One value bound to a `?` placeholder or read from a result column.
///
/// The cases are the storage classes both SQLite and PostgreSQL can represent without loss:
/// booleans are stored as INTEGER 0/1 and times as integer unix seconds (Int64).
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    /// A double; SQLite stores NaN as NULL.
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// Stores a boolean as INTEGER 0 or 1.
    public init(_ bool: Bool) {
        self = .integer(bool ? 1 : 0)
    }

    /// Stores a Swift `Int` as a 64-bit integer.
    public init(_ int: Int) {
        self = .integer(Int64(int))
    }

    /// `.text(s)`, or `.null` when `s` is nil.
    public static func optional(_ string: String?) -> SQLValue {
        string.map(SQLValue.text) ?? .null
    }

    /// `.integer(i)`, or `.null` when `i` is nil.
    public static func optionalInteger(_ integer: Int64?) -> SQLValue {
        integer.map(SQLValue.integer) ?? .null
    }

    /// `.blob(b)`, or `.null` when `b` is nil.
    public static func optionalBlob(_ bytes: [UInt8]?) -> SQLValue {
        bytes.map(SQLValue.blob) ?? .null
    }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The storage class name used in error messages (never the value itself: it may be a secret).
    var typeName: String {
        switch self {
        case .null: "null"
        case .integer: "integer"
        case .real: "real"
        case .text: "text"
        case .blob: "blob"
        }
    }
}

extension SQLValue: ExpressibleByStringLiteral {
    /// A string literal is `.text`.
    public init(stringLiteral value: String) {
        self = .text(value)
    }
}

extension SQLValue: ExpressibleByIntegerLiteral {
    /// An integer literal is `.integer`.
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension SQLValue: ExpressibleByFloatLiteral {
    /// A floating-point literal is `.real`.
    public init(floatLiteral value: Double) {
        self = .real(value)
    }
}

extension SQLValue: ExpressibleByNilLiteral {
    /// `nil` is `.null`.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension SQLValue: ExpressibleByBooleanLiteral {
    /// `true` / `false` are `.integer(1)` / `.integer(0)`.
    public init(booleanLiteral value: Bool) {
        self.init(value)
    }
}

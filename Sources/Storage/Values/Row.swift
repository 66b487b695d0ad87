/// One result row: column values by name.
///
/// Typed accessors throw `.missingColumn` when the column is absent and `.typeMismatch` when the
/// stored value has another type; the error names the column and types, never the value.
public struct Row: Sendable {
    /// Column names, shared by all rows of one result.
    let layout: RowLayout
    /// Values in column order.
    public let values: [SQLValue]

    init(layout: RowLayout, values: [SQLValue]) {
        self.layout = layout
        self.values = values
    }

    /// Builds a row from (column, value) pairs; useful for tests and other backends.
    public init(_ columns: [(String, SQLValue)]) {
        self.init(layout: RowLayout(columns.map(\.0)), values: columns.map(\.1))
    }

    /// Column names in result order.
    public var columns: [String] { layout.names }

    /// The value of `column`, or `.null` if the row has no such column.
    public subscript(_ column: String) -> SQLValue {
        guard let index = layout.index[column] else { return .null }
        return values[index]
    }

    /// True when the row has a column of that name.
    public func hasColumn(_ column: String) -> Bool {
        layout.index[column] != nil
    }

    /// An INTEGER column.
    public func int(_ column: String) throws(StorageError) -> Int64 {
        guard let value = try optionalInt(column) else { throw nullValue(column, expected: "integer") }
        return value
    }

    /// An INTEGER column that may be NULL.
    public func optionalInt(_ column: String) throws(StorageError) -> Int64? {
        switch try value(column) {
        case .null: return nil
        case .integer(let value): return value
        case let other: throw mismatch(column, found: other, expected: "integer")
        }
    }

    /// A TEXT column.
    public func string(_ column: String) throws(StorageError) -> String {
        guard let value = try optionalString(column) else { throw nullValue(column, expected: "text") }
        return value
    }

    /// A TEXT column that may be NULL.
    public func optionalString(_ column: String) throws(StorageError) -> String? {
        switch try value(column) {
        case .null: return nil
        case .text(let value): return value
        case let other: throw mismatch(column, found: other, expected: "text")
        }
    }

    /// A BLOB column.
    public func bytes(_ column: String) throws(StorageError) -> [UInt8] {
        guard let value = try optionalBytes(column) else { throw nullValue(column, expected: "blob") }
        return value
    }

    /// A BLOB column that may be NULL.
    public func optionalBytes(_ column: String) throws(StorageError) -> [UInt8]? {
        switch try value(column) {
        case .null: return nil
        case .blob(let value): return value
        case let other: throw mismatch(column, found: other, expected: "blob")
        }
    }

    /// A boolean stored as INTEGER 0 or 1 (any other value is a type mismatch).
    public func bool(_ column: String) throws(StorageError) -> Bool {
        guard let value = try optionalBool(column) else { throw nullValue(column, expected: "boolean") }
        return value
    }

    /// A boolean stored as INTEGER 0 or 1 that may be NULL.
    public func optionalBool(_ column: String) throws(StorageError) -> Bool? {
        switch try value(column) {
        case .null: return nil
        case .integer(0): return false
        case .integer(1): return true
        case .integer:
            throw StorageError(code: .typeMismatch, message: "column '\(column)' holds an integer other than 0 or 1, expected a boolean")
        case let other: throw mismatch(column, found: other, expected: "boolean")
        }
    }

    /// A REAL column; an INTEGER value is converted, since SQLite may store whole numbers as integers.
    public func double(_ column: String) throws(StorageError) -> Double {
        guard let value = try optionalDouble(column) else { throw nullValue(column, expected: "real") }
        return value
    }

    /// A REAL (or INTEGER) column that may be NULL.
    public func optionalDouble(_ column: String) throws(StorageError) -> Double? {
        switch try value(column) {
        case .null: return nil
        case .real(let value): return value
        case .integer(let value): return Double(value)
        case let other: throw mismatch(column, found: other, expected: "real")
        }
    }

    private func value(_ column: String) throws(StorageError) -> SQLValue {
        guard let index = layout.index[column] else {
            throw StorageError(code: .missingColumn, message: "no column '\(column)' in row (columns: \(layout.names.joined(separator: ", ")))")
        }
        return values[index]
    }

    private func mismatch(_ column: String, found: SQLValue, expected: String) -> StorageError {
        StorageError(code: .typeMismatch, message: "column '\(column)' holds \(found.typeName), expected \(expected)")
    }

    private func nullValue(_ column: String, expected: String) -> StorageError {
        StorageError(code: .typeMismatch, message: "column '\(column)' is NULL, expected \(expected)")
    }
}

extension Row: Equatable {
    /// Rows are equal when they have the same columns in the same order and the same values.
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.layout.names == rhs.layout.names && lhs.values == rhs.values
    }
}

/// Column names of one result and their positions; built once per query, shared by its rows.
final class RowLayout: Sendable {
    let names: [String]
    /// First position of each name: with duplicate names (a join without aliases) the first wins.
    let index: [String: Int]

    init(_ names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        for (position, name) in names.enumerated() where index[name] == nil {
            index[name] = position
        }
        self.index = index
    }
}

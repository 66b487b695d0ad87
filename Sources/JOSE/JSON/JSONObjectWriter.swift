/// Writes one compact JSON object member by member, straight to bytes: for the answers and
/// claims every login writes (the tokens response, its `user`, the access token's claims),
/// where building a `JSONValue` dictionary, hashing its keys and sorting them again to write
/// it cost more than the writing. Members are written in the order given, and callers give
/// them in ascending key order, so the bytes are exactly what `JSONValue.serialized()` writes
/// for the same members (debug builds check the order).
public struct JSONObjectWriter {
    private var output: [UInt8]
    private var isEmpty = true
    #if DEBUG
    private var previousKey: String?
    #endif

    /// An empty object, with room for `capacity` bytes before it regrows.
    public init(capacity: Int = 512) {
        output = []
        output.reserveCapacity(capacity)
        output.append(UInt8(ascii: "{"))
    }

    public mutating func add(_ key: StaticString, _ value: String) {
        writeKey(key)
        JSONEscaping.appendQuoted(value, to: &output)
    }

    /// `null` when `value` is nil (a present key, as `JSONValue.null` writes it).
    public mutating func add(_ key: StaticString, _ value: String?) {
        guard let value else {
            writeKey(key)
            return output.append(contentsOf: "null".utf8)
        }
        add(key, value)
    }

    public mutating func add(_ key: StaticString, _ value: Int64) {
        writeKey(key)
        JSONWriter.appendInteger(value, to: &output)
    }

    public mutating func add(_ key: StaticString, _ value: Int) {
        add(key, Int64(value))
    }

    public mutating func add(_ key: StaticString, _ value: Bool) {
        writeKey(key)
        output.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    /// Any value, written by `JSONWriter` (sorted keys inside it).
    public mutating func add(_ key: StaticString, _ value: JSONValue) {
        writeKey(key)
        // The buffer is moved to the writer and back, never shared: shared, the writer's first
        // append would copy everything written so far.
        var taken: [UInt8] = []
        swap(&taken, &output)
        var writer = JSONWriter(continuing: taken)
        writer.write(value)
        output = writer.output
    }

    /// A nested object whose members `members` writes (in ascending key order too), into this
    /// same buffer.
    public mutating func addObject(_ key: StaticString, _ members: (inout JSONObjectWriter) -> Void) {
        writeKey(key)
        writeNested(members)
    }

    /// An array of `count` objects, the one at each index written by `members`. By index, not
    /// generic over a sequence: a generic public method runs unspecialized from other modules,
    /// looking up type metadata at run time (visible in a login's profile).
    public mutating func addArray(_ key: StaticString, count: Int, _ members: (inout JSONObjectWriter, Int) -> Void) {
        writeKey(key)
        output.append(UInt8(ascii: "["))
        for index in 0..<count {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            writeNested { members(&$0, index) }
        }
        output.append(UInt8(ascii: "]"))
    }

    /// The object's bytes, closed.
    public consuming func finish() -> [UInt8] {
        output.append(UInt8(ascii: "}"))
        return output
    }

    /// Keys are literals: no escape to look for (debug builds check), copied as they are.
    private mutating func writeKey(_ key: StaticString) {
        #if DEBUG
        let text = key.description
        assert(JSONValue.string(text).serialized() == Array("\"\(text)\"".utf8), "a JSON key that needs escaping: \(text)")
        if let previousKey { assert(previousKey < text, "JSON members out of order: \(previousKey) before \(text)") }
        previousKey = text
        #endif
        if !isEmpty { output.append(UInt8(ascii: ",")) }
        isEmpty = false
        output.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { output.append(contentsOf: $0) }
        output.append(UInt8(ascii: "\""))
        output.append(UInt8(ascii: ":"))
    }

    /// `{`, the members, `}`: the nested object writes through this writer with its own
    /// member state. The outer object has a member by then (the key just written), so it is
    /// not empty after.
    private mutating func writeNested(_ members: (inout JSONObjectWriter) -> Void) {
        #if DEBUG
        let outerPreviousKey = previousKey
        previousKey = nil
        #endif
        isEmpty = true
        output.append(UInt8(ascii: "{"))
        members(&self)
        output.append(UInt8(ascii: "}"))
        isEmpty = false
        #if DEBUG
        previousKey = outerPreviousKey
        #endif
    }
}

import Foundation

/// A YAML node of the subset openapi/herald.yaml is written in: block mappings and sequences,
/// flow collections on one line, plain and quoted scalars, literal and folded block scalars.
/// Written here because no YAML library is available to the tests; it refuses (throws) what
/// it does not understand rather than guessing, so a malformed spec fails the tests.
indirect enum YAMLNode: Equatable, CustomStringConvertible {
    case scalar(String)
    case sequence([YAMLNode])
    case mapping([(key: String, value: YAMLNode)])

    static func == (lhs: YAMLNode, rhs: YAMLNode) -> Bool {
        switch (lhs, rhs) {
        case (.scalar(let a), .scalar(let b)): a == b
        case (.sequence(let a), .sequence(let b)): a == b
        case (.mapping(let a), .mapping(let b)): a.map(\.key) == b.map(\.key) && a.map(\.value) == b.map(\.value)
        default: false
        }
    }

    subscript(_ key: String) -> YAMLNode? {
        guard case .mapping(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    var scalar: String? { if case .scalar(let text) = self { text } else { nil } }
    var items: [YAMLNode]? { if case .sequence(let items) = self { items } else { nil } }
    var pairs: [(key: String, value: YAMLNode)]? { if case .mapping(let pairs) = self { pairs } else { nil } }

    /// Follows a local JSON pointer (`#/components/schemas/Realm`).
    func resolve(pointer: String) -> YAMLNode? {
        guard pointer.hasPrefix("#/") else { return nil }
        var node: YAMLNode? = self
        for part in pointer.dropFirst(2).split(separator: "/") {
            let key = part.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
            node = node?[key]
        }
        return node
    }

    var description: String {
        switch self {
        case .scalar(let text): "\"\(text)\""
        case .sequence(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        case .mapping(let pairs): "{" + pairs.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
    }
}

/// Why a document is not in the supported YAML subset, with its line number.
struct YAMLError: Error, CustomStringConvertible {
    let line: Int
    let message: String
    var description: String { "line \(line): \(message)" }
}

/// Parses the YAML subset described at `YAMLNode`.
struct YAMLParser {
    private struct Line {
        let number: Int
        let indent: Int
        let text: String   // without indentation and trailing comment
        let raw: String
    }

    private let raw: [String]
    private var index = 0

    static func parse(_ text: String) throws -> YAMLNode {
        var parser = YAMLParser(raw: text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        guard let first = parser.peek() else { return .mapping([]) }
        let node = try parser.block(indent: first.indent)
        if let extra = parser.peek() { throw YAMLError(line: extra.number, message: "unexpected content at indent \(extra.indent)") }
        return node
    }

    private init(raw: [String]) {
        self.raw = raw
    }

    // MARK: - Lines

    /// The next significant line (not blank, not a comment), without consuming it.
    private mutating func peek() -> Line? {
        while index < raw.count {
            let text = raw[index]
            if text.contains("\t") && text.trimmingLeadingSpaces().hasPrefix("\t") { return line(at: index) }
            let trimmed = text.trimmingLeadingSpaces()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { index += 1; continue }
            return line(at: index)
        }
        return nil
    }

    private func line(at index: Int) -> Line {
        let text = raw[index]
        let indent = text.prefix { $0 == " " }.count
        let content = Self.stripComment(String(text.dropFirst(indent)))
        return Line(number: index + 1, indent: indent, text: content, raw: text)
    }

    /// Removes a ` #` comment outside quotes and trailing spaces.
    static func stripComment(_ text: String) -> String {
        var quote: Character?
        var previous: Character = " "
        var result = ""
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "\"" || character == "'" {
                quote = character
            } else if character == "#" && previous == " " {
                break
            }
            result.append(character)
            previous = character
        }
        while result.last == " " { result.removeLast() }
        return result
    }

    // MARK: - Blocks

    private mutating func block(indent: Int) throws -> YAMLNode {
        guard let line = peek() else { return .scalar("") }
        if line.raw.hasPrefix(String(repeating: " ", count: line.indent) + "\t") {
            throw YAMLError(line: line.number, message: "tab in indentation")
        }
        if line.text == "-" || line.text.hasPrefix("- ") { return try sequence(indent: indent) }
        return try mapping(indent: indent)
    }

    private mutating func mapping(indent: Int, firstLine: Line? = nil) throws -> YAMLNode {
        var pairs: [(key: String, value: YAMLNode)] = []
        var pending = firstLine
        while true {
            let line: Line
            if let first = pending {
                line = first
                pending = nil
            } else {
                guard let next = peek(), next.indent == indent, !(next.text == "-" || next.text.hasPrefix("- ")) else { break }
                line = next
                index += 1
            }
            guard let (key, rest) = try Self.splitKey(line.text, line: line.number) else {
                throw YAMLError(line: line.number, message: "expected 'key: value'")
            }
            if pairs.contains(where: { $0.key == key }) { throw YAMLError(line: line.number, message: "duplicate key '\(key)'") }
            pairs.append((key, try value(after: rest, parentIndent: indent, line: line)))
        }
        if let next = peek(), next.indent > indent {
            throw YAMLError(line: next.number, message: "unexpected indentation")
        }
        return .mapping(pairs)
    }

    private mutating func sequence(indent: Int) throws -> YAMLNode {
        var items: [YAMLNode] = []
        while let line = peek(), line.indent == indent, line.text == "-" || line.text.hasPrefix("- ") {
            index += 1
            let content = line.text == "-" ? "" : String(line.text.dropFirst(2)).trimmingLeadingSpaces()
            if content.isEmpty {
                guard let next = peek(), next.indent > indent else { items.append(.scalar("")); continue }
                items.append(try block(indent: next.indent))
            } else if !content.hasPrefix("\""), !content.hasPrefix("'"), !content.hasPrefix("["), !content.hasPrefix("{"),
                      try Self.splitKey(content, line: line.number) != nil {
                // "- key: value" opens a mapping whose keys sit two columns further in.
                let inner = Line(number: line.number, indent: indent + 2, text: content, raw: line.raw)
                items.append(try mapping(indent: indent + 2, firstLine: inner))
            } else {
                items.append(try Self.inline(content, line: line.number))
            }
        }
        return .sequence(items)
    }

    /// The value after `key:` — inline, a block scalar, or a nested block.
    private mutating func value(after rest: String, parentIndent: Int, line: Line) throws -> YAMLNode {
        if rest.isEmpty {
            guard let next = peek() else { return .scalar("") }
            if next.indent > parentIndent { return try block(indent: next.indent) }
            if next.indent == parentIndent, next.text == "-" || next.text.hasPrefix("- ") {
                return try sequence(indent: parentIndent)
            }
            return .scalar("")
        }
        if let style = rest.first, style == "|" || style == ">" {
            guard rest.count == 1 || ["|-", "|+", ">-", ">+"].contains(rest) else {
                throw YAMLError(line: line.number, message: "unsupported block scalar header '\(rest)'")
            }
            return .scalar(blockScalar(folded: style == ">", chomp: rest.dropFirst().first, parentIndent: parentIndent))
        }
        return try Self.inline(rest, line: line.number)
    }

    private mutating func blockScalar(folded: Bool, chomp: Character?, parentIndent: Int) -> String {
        var lines: [String] = []
        var blockIndent: Int?
        while index < raw.count {
            let text = raw[index]
            let indent = text.prefix { $0 == " " }.count
            if text.trimmingLeadingSpaces().isEmpty {
                lines.append("")
                index += 1
                continue
            }
            if indent <= parentIndent { break }
            if blockIndent == nil { blockIndent = indent }
            guard let blockIndent, indent >= blockIndent else { break }
            lines.append(String(text.dropFirst(blockIndent)))
            index += 1
        }
        while lines.last == "" { lines.removeLast() }
        var text = folded ? Self.fold(lines) : lines.joined(separator: "\n")
        if chomp != "-" { text += "\n" }
        return text
    }

    private static func fold(_ lines: [String]) -> String {
        var result = ""
        for (offset, line) in lines.enumerated() {
            if offset > 0 { result += line.isEmpty || lines[offset - 1].isEmpty ? "\n" : " " }
            result += line
        }
        return result
    }

    // MARK: - Inline values

    /// Splits `key: rest` / `key:` outside quotes; nil when the text is not a key line.
    static func splitKey(_ text: String, line: Int) throws -> (String, String)? {
        var key: String
        var rest: Substring
        if text.hasPrefix("\"") || text.hasPrefix("'") {
            var scanner = Scanner(text: text, line: line)
            key = try scanner.quoted()
            rest = scanner.remaining
            guard rest.hasPrefix(":") else { return nil }
            rest = rest.dropFirst()
            guard rest.isEmpty || rest.hasPrefix(" ") else { return nil }
        } else {
            guard let range = text.range(of: ": ") ?? (text.hasSuffix(":") ? text.index(before: text.endIndex)..<text.endIndex : nil)
            else { return nil }
            key = String(text[..<range.lowerBound])
            rest = text[range.upperBound...]
            if key.hasPrefix("[") || key.hasPrefix("{") || key.isEmpty { return nil }
        }
        return (key, String(rest).trimmingLeadingSpaces())
    }

    static func inline(_ text: String, line: Int) throws -> YAMLNode {
        var scanner = Scanner(text: text, line: line)
        let node = try scanner.flowValue(inFlow: false)
        guard scanner.remaining.allSatisfy({ $0 == " " }) else {
            throw YAMLError(line: line, message: "unexpected '\(scanner.remaining)'")
        }
        return node
    }

    /// Reads flow values and quoted scalars from one line.
    struct Scanner {
        let text: String
        let line: Int
        var position: String.Index

        init(text: String, line: Int) {
            self.text = text
            self.line = line
            position = text.startIndex
        }

        var remaining: Substring { text[position...] }

        mutating func skipSpaces() {
            while position < text.endIndex, text[position] == " " { position = text.index(after: position) }
        }

        mutating func flowValue(inFlow: Bool) throws -> YAMLNode {
            skipSpaces()
            guard position < text.endIndex else { return .scalar("") }
            switch text[position] {
            case "[": return try flowSequence()
            case "{": return try flowMapping()
            case "\"", "'": return .scalar(try quoted())
            default: return .scalar(plain(inFlow: inFlow))
            }
        }

        mutating func plain(inFlow: Bool) -> String {
            let start = position
            while position < text.endIndex {
                let character = text[position]
                if inFlow && (character == "," || character == "]" || character == "}") { break }
                if inFlow && character == ":" && text.index(after: position) < text.endIndex
                    && text[text.index(after: position)] == " " { break }
                position = text.index(after: position)
            }
            var value = String(text[start..<position])
            while value.last == " " { value.removeLast() }
            return value
        }

        mutating func quoted() throws -> String {
            let quote = text[position]
            position = text.index(after: position)
            var result = ""
            while position < text.endIndex {
                let character = text[position]
                position = text.index(after: position)
                if character == quote {
                    if quote == "'", position < text.endIndex, text[position] == "'" {
                        result.append("'")
                        position = text.index(after: position)
                        continue
                    }
                    return result
                }
                if quote == "\"", character == "\\" {
                    guard position < text.endIndex else { break }
                    let escaped = text[position]
                    position = text.index(after: position)
                    switch escaped {
                    case "n": result.append("\n")
                    case "t": result.append("\t")
                    case "\"": result.append("\"")
                    case "\\": result.append("\\")
                    case "/": result.append("/")
                    default: throw YAMLError(line: line, message: "unsupported escape \\\(escaped)")
                    }
                    continue
                }
                result.append(character)
            }
            throw YAMLError(line: line, message: "unterminated quoted scalar")
        }

        mutating func flowSequence() throws -> YAMLNode {
            position = text.index(after: position)
            var items: [YAMLNode] = []
            skipSpaces()
            if position < text.endIndex, text[position] == "]" {
                position = text.index(after: position)
                return .sequence([])
            }
            while true {
                items.append(try flowValue(inFlow: true))
                skipSpaces()
                guard position < text.endIndex else { throw YAMLError(line: line, message: "unterminated [") }
                let character = text[position]
                position = text.index(after: position)
                if character == "]" { return .sequence(items) }
                guard character == "," else { throw YAMLError(line: line, message: "expected ',' or ']'") }
            }
        }

        mutating func flowMapping() throws -> YAMLNode {
            position = text.index(after: position)
            var pairs: [(key: String, value: YAMLNode)] = []
            skipSpaces()
            if position < text.endIndex, text[position] == "}" {
                position = text.index(after: position)
                return .mapping([])
            }
            while true {
                guard case .scalar(let key) = try flowValue(inFlow: true) else {
                    throw YAMLError(line: line, message: "flow mapping key must be a scalar")
                }
                skipSpaces()
                guard position < text.endIndex, text[position] == ":" else { throw YAMLError(line: line, message: "expected ':'") }
                position = text.index(after: position)
                pairs.append((key, try flowValue(inFlow: true)))
                skipSpaces()
                guard position < text.endIndex else { throw YAMLError(line: line, message: "unterminated {") }
                let character = text[position]
                position = text.index(after: position)
                if character == "}" { return .mapping(pairs) }
                guard character == "," else { throw YAMLError(line: line, message: "expected ',' or '}'") }
            }
        }
    }
}

extension String {
    func trimmingLeadingSpaces() -> String { String(drop { $0 == " " }) }
}

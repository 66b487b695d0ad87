/// A parsed route template such as "/api/oauth/:realm/token": literal segments match
/// exactly, `:name` segments match one non-empty segment. A template may end in "/"
/// ("/console/"): its last segment is then the empty literal, which matches only a request
/// path with that trailing slash, so a directory-like page has exactly one address.
struct RouteTemplate: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
    }

    let text: String
    let segments: [Segment]

    /// Templates are written in code, so a malformed one is a programming error.
    init(_ text: String) {
        precondition(text.hasPrefix("/"), "route template must start with '/': \(text)")
        self.text = text
        let pieces = text == "/" ? [] : text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        var names = Set<String>()
        segments = pieces.enumerated().map { index, piece in
            if piece.isEmpty && index == pieces.count - 1 { return .literal("") }
            precondition(!piece.isEmpty, "route template has an empty segment: \(text)")
            if piece.hasPrefix(":") {
                let name = String(piece.dropFirst())
                precondition(!name.isEmpty, "route parameter needs a name: \(text)")
                precondition(names.insert(name).inserted, "route parameter :\(name) repeats: \(text)")
                return .parameter(name)
            }
            precondition(piece != "." && piece != "..", "route template has a dot segment: \(text)")
            return .literal(String(piece))
        }
    }

    /// Two templates with the same shape would match exactly the same paths.
    var shape: [String?] {
        segments.map { if case .literal(let value) = $0 { value } else { nil } }
    }

    /// The parameters when `path` (decoded segments) matches, else nil. Literals are compared
    /// first, so a template that does not match allocates nothing.
    func match(_ path: [String]) -> [String: String]? {
        guard path.count == segments.count else { return nil }
        for (segment, value) in zip(segments, path) {
            switch segment {
            case .literal(let literal): guard literal == value else { return nil }
            case .parameter: guard !value.isEmpty else { return nil }
            }
        }
        var parameters: [String: String] = [:]
        for case (.parameter(let name), let value) in zip(segments, path) { parameters[name] = value }
        return parameters
    }

    /// Whether this template beats `other` when both match: the first literal where the
    /// other has a parameter wins, so "/realms/new" is preferred over "/realms/:id".
    func isMoreSpecific(than other: RouteTemplate) -> Bool {
        for (mine, theirs) in zip(segments, other.segments) {
            switch (mine, theirs) {
            case (.literal, .parameter): return true
            case (.parameter, .literal): return false
            default: continue
            }
        }
        return false
    }
}

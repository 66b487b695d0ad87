/// Where the database lives, parsed from configuration (`HERALD_DATABASE` / `--database`).
///
/// - `sqlite:./data/herald.db`, `sqlite:relative.db`, `sqlite:/abs/path.db` → `.sqlite(path:)`
///   (`sqlite:///abs/path.db` is accepted too and means `/abs/path.db`)
/// - `postgres://…`, `postgresql://…` → `.postgres(url:)`
///
/// A URL may carry a password, so errors never echo the input and `description` masks it.
public enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    /// A SQLite database file (the path as given; relative paths are relative to the working directory).
    case sqlite(path: String)
    /// A PostgreSQL connection URL, kept verbatim for libpq.
    case postgres(url: String)

    /// Parses a location string; throws `.unsupported` for anything else.
    public init(parsing text: String) throws(StorageError) {
        let trimmed = text.trimmingWhitespace()
        let lowered = trimmed.lowercased()
        if lowered.hasPrefix("sqlite:") {
            var path = String(trimmed.dropFirst("sqlite:".count))
            if path.hasPrefix("///") { path.removeFirst(2) }
            guard !path.isEmpty else {
                throw StorageError(code: .unsupported, message: "the sqlite: database location has no file path (expected e.g. sqlite:./data/herald.db)")
            }
            guard path != ":memory:", !path.hasPrefix("file:") else {
                // In-memory databases are private to one connection, so the writer and the
                // readers would each see a different database; URI filenames are not enabled.
                throw StorageError(code: .unsupported, message: "in-memory and file: URI SQLite databases are not supported; give a file path")
            }
            self = .sqlite(path: path)
            return
        }
        for scheme in ["postgres://", "postgresql://"] where lowered.hasPrefix(scheme) {
            guard trimmed.count > scheme.count else {
                throw StorageError(code: .unsupported, message: "the PostgreSQL database location has nothing after \(scheme)")
            }
            self = .postgres(url: trimmed)
            return
        }
        throw StorageError(code: .unsupported, message: Self.rejectionMessage(for: trimmed))
    }

    /// The location with any URL password replaced by `***`, safe to log.
    public var description: String {
        switch self {
        case .sqlite(let path):
            return "sqlite:\(path)"
        case .postgres(let url):
            return Self.maskingPassword(in: url)
        }
    }

    /// Names the scheme only when it is clearly one (`name://`), so a stray `user:password@host`
    /// never ends up in an error message or a log.
    private static func rejectionMessage(for text: String) -> String {
        let expected = "expected sqlite:<path> or postgres://…"
        guard let separator = text.range(of: "://") else {
            return "unsupported database location (\(expected))"
        }
        let scheme = text[..<separator.lowerBound]
        let isScheme = !scheme.isEmpty && scheme.count <= 32 && scheme.allSatisfy {
            $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".")
        }
        guard isScheme else {
            return "unsupported database location (\(expected))"
        }
        return "unsupported database location scheme '\(scheme)' (\(expected))"
    }

    /// `postgres://user:secret@host/db` → `postgres://user:***@host/db`; query parameters such
    /// as `password=` are masked too.
    private static func maskingPassword(in url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let afterScheme = url[schemeEnd.upperBound...]
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        var masked = String(url[..<schemeEnd.upperBound])
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            if let colon = userInfo.firstIndex(of: ":") {
                masked += userInfo[..<colon] + ":***"
            } else {
                masked += userInfo
            }
            masked += authority[at...]
        } else {
            masked += authority
        }
        let rest = afterScheme[authorityEnd...]
        guard let queryStart = rest.firstIndex(of: "?") else { return masked + rest }
        masked += rest[...queryStart]
        let query = rest[rest.index(after: queryStart)...]
        masked += query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            if pair.lowercased().hasPrefix("password=") { return "password=***" }
            return String(pair)
        }.joined(separator: "&")
        return masked
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}

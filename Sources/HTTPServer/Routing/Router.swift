/// An async request handler.
public typealias HTTPHandler = @Sendable (HTTPRequest) async -> HTTPResponse

/// What the router decided for a method and path.
public enum RouteResolution: Sendable {
    /// A route matched: its handler, the decoded `:name` values and its template.
    case matched(HTTPHandler, parameters: [String: String], template: String)
    /// The path matches routes, none of them for this method; `allowed` is sorted.
    case methodNotAllowed(allowed: [String])
    /// No route matches the path (or the path is unreadable).
    case notFound
}

/// Maps method + path to a handler. Templates are "/literal/:parameter"; see
/// `PathSegments` for how request paths are read.
public struct Router: Sendable {
    private struct Route: Sendable {
        let method: String
        let template: RouteTemplate
        let handler: HTTPHandler
    }

    private var table: [Route] = []

    /// An empty router.
    public init() {}

    /// Registers `handler` for `method` (case-sensitive, as HTTP defines) and `template`.
    /// A malformed template, or a second route of the same method and shape, traps.
    public mutating func add(_ method: String, _ template: String, _ handler: @escaping HTTPHandler) {
        let parsed = RouteTemplate(template)
        precondition(!table.contains { $0.method == method && $0.template.shape == parsed.shape },
                     "duplicate route \(method) \(template)")
        table.append(Route(method: method, template: parsed, handler: handler))
    }

    /// The registered routes in registration order.
    public var routes: [(method: String, template: String)] {
        table.map { (method: $0.method, template: $0.template.text) }
    }

    /// The routes whose template `belongs` accepts, in registration order (a server that
    /// answers only part of an application, e.g. its admin side on another address).
    public func filtered(_ belongs: (_ template: String) -> Bool) -> Router {
        var router = Router()
        router.table = table.filter { belongs($0.template.text) }
        return router
    }

    /// Resolves `path` (raw, percent-encoded, without query) for `method`.
    public func resolve(method: String, path: String) -> RouteResolution {
        guard let segments = PathSegments.decode(path) else { return .notFound }
        return resolve(method: method, segments: segments)
    }

    func resolve(method: String, segments: [String]) -> RouteResolution {
        var best: (route: Route, parameters: [String: String])?
        var allowed: Set<String> = []
        for route in table {
            guard let parameters = route.template.match(segments) else { continue }
            guard route.method == method else {
                allowed.insert(route.method)
                continue
            }
            if best == nil || route.template.isMoreSpecific(than: best!.route.template) {
                best = (route, parameters)
            }
        }
        if let best {
            return .matched(best.route.handler, parameters: best.parameters, template: best.route.template.text)
        }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed.sorted())
    }
}

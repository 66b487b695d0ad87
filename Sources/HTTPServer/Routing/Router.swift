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
    /// Indices into `table` by segment count: a path is compared only with the templates of
    /// its length, a few of about a hundred, and by index, since copying a route out of the
    /// table retains its strings and handler (that scan was 15 % of a `/healthz` request).
    private var bySegmentCount: [Int: [Int]] = [:]

    /// An empty router.
    public init() {}

    /// Registers `handler` for `method` (case-sensitive, as HTTP defines) and `template`.
    /// A malformed template, or a second route of the same method and shape, traps.
    public mutating func add(_ method: String, _ template: String, _ handler: @escaping HTTPHandler) {
        let parsed = RouteTemplate(template)
        precondition(!table.contains { $0.method == method && $0.template.shape == parsed.shape },
                     "duplicate route \(method) \(template)")
        append(Route(method: method, template: parsed, handler: handler))
    }

    private mutating func append(_ route: Route) {
        bySegmentCount[route.template.segments.count, default: []].append(table.count)
        table.append(route)
    }

    /// The registered routes in registration order.
    public var routes: [(method: String, template: String)] {
        table.map { (method: $0.method, template: $0.template.text) }
    }

    /// The routes whose template `belongs` accepts, in registration order (a server that
    /// answers only part of an application, e.g. its admin side on another address).
    public func filtered(_ belongs: (_ template: String) -> Bool) -> Router {
        var router = Router()
        for route in table where belongs(route.template.text) { router.append(route) }
        return router
    }

    /// Resolves `path` (raw, percent-encoded, without query) for `method`.
    public func resolve(method: String, path: String) -> RouteResolution {
        guard let segments = PathSegments.decode(path) else { return .notFound }
        return resolve(method: method, segments: segments)
    }

    /// A HEAD request without a HEAD route of its own is answered by the GET route (RFC 9110
    /// §9.3.2): load balancers and link checkers probe with HEAD, and libmicrohttpd leaves the
    /// body out of the response (keeping the GET body's Content-Length). So every GET route
    /// answers HEAD without a second registration, and a 405's `Allow` lists HEAD beside GET.
    func resolve(method: String, segments: [String]) -> RouteResolution {
        guard let candidates = bySegmentCount[segments.count] else { return .notFound }
        var best: (index: Int, parameters: [String: String])?
        var bestGet: (index: Int, parameters: [String: String])?
        var allowed: Set<String> = []
        for index in candidates {
            guard let parameters = table[index].template.match(segments) else { continue }
            let routeMethod = table[index].method
            allowed.insert(routeMethod)
            if routeMethod == method {
                best = moreSpecific(best, (index, parameters))
            } else if method == "HEAD", routeMethod == "GET" {
                bestGet = moreSpecific(bestGet, (index, parameters))
            }
        }
        if let found = best ?? bestGet {
            let route = table[found.index]
            return .matched(route.handler, parameters: found.parameters, template: route.template.text)
        }
        if allowed.contains("GET") { allowed.insert("HEAD") }
        return allowed.isEmpty ? .notFound : .methodNotAllowed(allowed: allowed.sorted())
    }

    /// The match of the more specific template; `current` on a tie (the earlier registration).
    private func moreSpecific(_ current: (index: Int, parameters: [String: String])?,
                              _ candidate: (index: Int, parameters: [String: String])) -> (index: Int, parameters: [String: String]) {
        if let current, !table[candidate.index].template.isMoreSpecific(than: table[current.index].template) {
            return current
        }
        return candidate
    }
}

import HTTPServer

/// An admin route handler, called only after the admin token was checked and the route's
/// access rules (`AdminAccessPolicy`) admitted the caller.
typealias AdminHandler = @Sendable (_ request: HTTPRequest, _ caller: AdminCaller) async throws -> HTTPResponse

/// One admin route: method, router template, what it needs of the caller, and handler. The
/// needs are derived here from the method and the template, so a new route cannot forget them:
/// every method but GET and HEAD writes, and a `:realm` segment names the route's realm.
struct AdminRoute: Sendable {
    /// Which tokens, by scope, may reach a route (the role check comes on top).
    enum Reach: Sendable, Equatable {
        /// Any token whose scope holds the realm in `realmParameter`. A route without that
        /// parameter declared `scoped` is a list whose handler answers only the caller's realms.
        case scoped
        /// Only all-realms tokens: creating and deleting realms, managing admin tokens.
        case allRealmsOnly
    }

    /// The path parameter that names a route's realm.
    static let realmParameterName = "realm"

    let method: String
    let template: String
    /// Whether the route changes anything; a viewer gets 403 for every route that does.
    let writes: Bool
    /// The path parameter naming the realm the route works in; a token outside it gets 404.
    let realmParameter: String?
    let reach: Reach
    let handler: AdminHandler

    /// Without `reach`, a route in a realm is `scoped` and any other is `allRealmsOnly`: a new
    /// cross-realm route stays closed to realm-scoped tokens until it declares that its handler
    /// filters by the caller's realms.
    init(_ method: String, _ template: String, reach: Reach? = nil, _ handler: @escaping AdminHandler) {
        self.method = method
        self.template = template
        writes = method != "GET" && method != "HEAD"
        realmParameter = template.split(separator: "/").contains(Substring(":" + Self.realmParameterName))
            ? Self.realmParameterName : nil
        self.reach = reach ?? (realmParameter == nil ? .allRealmsOnly : .scoped)
        self.handler = handler
    }
}

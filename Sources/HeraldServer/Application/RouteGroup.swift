import HTTPServer

/// A set of routes registered together (ops, admin, public OAuth, session API). Each group is
/// built in `HeraldApplication.routeGroups` from the application's services, taking only those
/// its routes use.
protocol RouteGroup {
    func register(in router: inout Router, endpoint: Endpoint)
}

import HTTPServer

/// `/healthz` (the process answers), `/readyz` (the database answers too) and `/metrics`.
struct OpsRoutes: RouteGroup {
    let context: HeraldContext

    func register(in router: inout Router, endpoint: Endpoint) {
        // Built once: load balancers poll this, and it is the ceiling the benchmarks compare to.
        let healthy = HTTPResponse.json(["status": "ok"])
        router.add("GET", "/healthz", endpoint.handler { _ in healthy })
        let database = context.database
        router.add("GET", "/readyz", endpoint.handler { _ in
            if await database.isReachable() {
                return .json(["status": "ready"])
            }
            return .json(status: 503, ["status": "unavailable"])
        })
        let metrics = context.metrics
        router.add("GET", "/metrics", endpoint.handler { _ in
            .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        })
    }
}

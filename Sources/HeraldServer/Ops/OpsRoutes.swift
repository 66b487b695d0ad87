import HTTPServer
import Storage

/// `/healthz` (the process answers), `/readyz` (the database answers too) and `/metrics`.
struct OpsRoutes: RouteGroup {
    let database: any Database
    let metrics: HeraldMetrics

    func register(in router: inout Router, endpoint: Endpoint) {
        // Built once: load balancers poll this, and it is the ceiling the benchmarks compare to.
        let healthy = HTTPResponse.json(["status": "ok"])
        let database = database, metrics = metrics
        router.add("GET", "/healthz", endpoint.handler { _ in healthy })
        router.add("GET", "/readyz", endpoint.handler { _ in
            if await database.isReachable() {
                return .json(["status": "ready"])
            }
            return .json(status: 503, ["status": "unavailable"])
        })
        router.add("GET", "/metrics", endpoint.handler { _ in
            .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        })
    }
}

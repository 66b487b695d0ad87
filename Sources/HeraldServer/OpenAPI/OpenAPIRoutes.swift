import HTTPServer

/// `GET /api-docs/openapi.yaml`: the OpenAPI description, served from the binary (embedded by
/// scripts/embed-openapi.sh), so it does not depend on the working directory.
struct OpenAPIRoutes: RouteGroup {
    func register(in router: inout Router, endpoint: Endpoint) {
        router.add("GET", "/api-docs/openapi.yaml", endpoint.handler { _ in
            .text(OpenAPIDocument.yaml, contentType: "application/yaml")
        })
    }
}

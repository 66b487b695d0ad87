import Foundation
import HTTPServer

/// The admin console: static HTML, CSS and JavaScript modules embedded in the binary
/// (scripts/embed-console.sh), which talk only to the admin API with the token the operator
/// signs in with. `GET /console` redirects to `/console/` so relative module URLs resolve
/// under it; `/console/` is index.html; `/console/:file` the other files.
struct ConsoleRoutes: RouteGroup {
    /// Scripts, styles and API calls from this origin only, nothing inline, no framing, no
    /// `<base>` and forms posting nowhere else: an injected string can neither run nor leak the
    /// token kept in sessionStorage.
    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        + "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

    func register(in router: inout Router, endpoint: Endpoint) {
        router.add("GET", "/console", endpoint.handler { _ in
            HTTPResponse(status: 301, headers: ["Location": "/console/", "Cache-Control": "no-cache"])
        })
        router.add("GET", "/console/", endpoint.handler { request in
            try Self.serve("index.html", request)
        })
        router.add("GET", "/console/:file", endpoint.handler { request in
            try Self.serve(request.parameter("file"), request)
        })
    }

    static func serve(_ name: String, _ request: HTTPRequest) throws -> HTTPResponse {
        guard let asset = ConsoleAsset.all[name] else {
            throw APIError(status: 404, code: "not_found", message: "No such console file")
        }
        // no-cache, not max-age: the files are not fingerprinted, so after an upgrade a cached
        // module could meet a new one; the ETag keeps revalidation to a 304.
        var headers: HTTPHeaders = [
            "Content-Type": asset.contentType, "Cache-Control": "no-cache", "ETag": asset.etag,
            "Content-Security-Policy": contentSecurityPolicy, "X-Frame-Options": "DENY",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
        ]
        if let match = request.headers["If-None-Match"],
           match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag }) {
            headers.remove("Content-Type")
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: headers, body: asset.bytes)
    }
}

import Testing
@testable import HTTPServer

@Suite("Router (in-process, no sockets)")
struct RouterTests {
    private static func router(_ routes: [(String, String)]) -> Router {
        var router = Router()
        for (method, template) in routes {
            router.add(method, template) { _ in HTTPResponse(status: 200, body: Array("\(method) \(template)".utf8)) }
        }
        return router
    }

    private static func matched(_ resolution: RouteResolution) -> (template: String, parameters: [String: String])? {
        if case .matched(_, let parameters, let template) = resolution { return (template, parameters) }
        return nil
    }

    @Test func filteredRouterKeepsOnlyTheAcceptedTemplatesInOrder() {
        let router = Self.router([("GET", "/healthz"), ("GET", "/api/admin/realms"), ("POST", "/api/admin/realms"),
                                  ("GET", "/api/oauth/:realm/jwks.json")])
        let admin = router.filtered { $0.hasPrefix("/api/admin/") }
        #expect(admin.routes.map { "\($0.method) \($0.template)" } == ["GET /api/admin/realms", "POST /api/admin/realms"])
        #expect(Self.matched(admin.resolve(method: "GET", path: "/healthz")) == nil)
        let rest = router.filtered { !$0.hasPrefix("/api/admin/") }
        if case .notFound = rest.resolve(method: "GET", path: "/api/admin/realms") {} else {
            Issue.record("a filtered-out route must be not found, not a method mismatch")
        }
        #expect(Self.matched(rest.resolve(method: "GET", path: "/api/oauth/acme/jwks.json"))?.parameters == ["realm": "acme"])
        #expect(router.routes.count == 4, "the original is unchanged")
    }

    @Test func literalRouteMatchesOnlyTheExactPath() {
        let router = Self.router([("GET", "/healthz")])
        #expect(Self.matched(router.resolve(method: "GET", path: "/healthz"))?.template == "/healthz")
        #expect(Self.matched(router.resolve(method: "GET", path: "/healthz/")) == nil)
        #expect(Self.matched(router.resolve(method: "GET", path: "/healthzz")) == nil)
        #expect(Self.matched(router.resolve(method: "GET", path: "/HEALTHZ")) == nil)
    }

    @Test func rootTemplateMatchesOnlyRoot() {
        let router = Self.router([("GET", "/")])
        #expect(Self.matched(router.resolve(method: "GET", path: "/"))?.template == "/")
        #expect(Self.matched(router.resolve(method: "GET", path: "//")) == nil)
    }

    @Test func parameterCapturesOneDecodedSegment() throws {
        let router = Self.router([("POST", "/api/oauth/:realm/token")])
        let match = try #require(Self.matched(router.resolve(method: "POST", path: "/api/oauth/my%20realm/token")))
        #expect(match.template == "/api/oauth/:realm/token")
        #expect(match.parameters == ["realm": "my realm"])
    }

    @Test func matchedHandlerIsTheRegisteredOne() async throws {
        let router = Self.router([("GET", "/a"), ("GET", "/b")])
        guard case .matched(let handler, _, _) = router.resolve(method: "GET", path: "/b") else {
            Issue.record("no match")
            return
        }
        let response = await handler(HTTPRequest(method: "GET", path: "/b"))
        #expect(String(decoding: response.body, as: UTF8.self) == "GET /b")
    }

    @Test func encodedSlashStaysInsideItsSegment() throws {
        let router = Self.router([("GET", "/users/:id"), ("GET", "/users/:id/keys")])
        let match = try #require(Self.matched(router.resolve(method: "GET", path: "/users/a%2Fkeys")))
        #expect(match.template == "/users/:id")
        #expect(match.parameters == ["id": "a/keys"])
        #expect(Self.matched(router.resolve(method: "GET", path: "/users/a/keys"))?.template == "/users/:id/keys")
    }

    @Test(arguments: ["/users/..", "/users/.", "/users/%2E%2E", "/users/%2e", "/users/../users/x", "/users/%2e%2E/keys"])
    func dotSegmentsNeverMatch(path: String) {
        let router = Self.router([("GET", "/users/:id"), ("GET", "/users/:id/keys"), ("GET", "/:a/:b/:c")])
        guard case .notFound = router.resolve(method: "GET", path: path) else {
            Issue.record("\(path) resolved")
            return
        }
    }

    @Test(arguments: ["/users//keys", "/users/", "//keys"])
    func emptySegmentNeverMatchesParameter(path: String) {
        let router = Self.router([("GET", "/users/:id/keys"), ("GET", "/users/:id"), ("GET", "/:realm/keys")])
        #expect(Self.matched(router.resolve(method: "GET", path: path)) == nil)
    }

    @Test func trailingSlashTemplateMatchesOnlyThePathWithTheSlash() {
        let router = Self.router([("GET", "/console"), ("GET", "/console/"), ("GET", "/console/:file")])
        #expect(Self.matched(router.resolve(method: "GET", path: "/console/"))?.template == "/console/")
        #expect(Self.matched(router.resolve(method: "GET", path: "/console"))?.template == "/console")
        #expect(Self.matched(router.resolve(method: "GET", path: "/console/app.js"))?.parameters == ["file": "app.js"])
        #expect(Self.matched(router.resolve(method: "GET", path: "/console//")) == nil)
        #expect(Self.matched(router.resolve(method: "GET", path: "/console/app.js/")) == nil)
    }

    @Test(arguments: ["/users/%zz", "/users/%4", "/users/%", "/users/a%00b", "/users/%FF", "users/x", ""])
    func unreadablePathIsNotFound(path: String) {
        let router = Self.router([("GET", "/users/:id")])
        guard case .notFound = router.resolve(method: "GET", path: path) else {
            Issue.record("\(path) resolved")
            return
        }
    }

    @Test func wrongMethodReportsSortedAllowedMethods() {
        let router = Self.router([("POST", "/items/:id"), ("GET", "/items/:id"), ("DELETE", "/other")])
        guard case .methodNotAllowed(let allowed) = router.resolve(method: "PUT", path: "/items/7") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "HEAD", "POST"], "HEAD is allowed wherever GET is")
    }

    @Test func methodsAreCaseSensitive() {
        let router = Self.router([("GET", "/items")])
        guard case .methodNotAllowed(let allowed) = router.resolve(method: "get", path: "/items") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "HEAD"])
        guard case .methodNotAllowed = router.resolve(method: "head", path: "/items") else {
            Issue.record("lowercase head is not HEAD")
            return
        }
    }

    @Test func unknownPathIsNotFound() {
        let router = Self.router([("GET", "/items")])
        guard case .notFound = router.resolve(method: "GET", path: "/nothing") else {
            Issue.record("expected 404")
            return
        }
    }

    @Test func literalSegmentBeatsParameterWhateverTheOrder() {
        let router = Self.router([("GET", "/realms/:id"), ("GET", "/realms/new"), ("GET", "/:a/new")])
        #expect(Self.matched(router.resolve(method: "GET", path: "/realms/new"))?.template == "/realms/new")
        #expect(Self.matched(router.resolve(method: "GET", path: "/realms/r1"))?.template == "/realms/:id")
        #expect(Self.matched(router.resolve(method: "GET", path: "/x/new"))?.template == "/:a/new")
    }

    @Test func parameterRouteOfThisMethodWinsOverLiteralOfAnother() {
        let router = Self.router([("GET", "/realms/:id"), ("DELETE", "/realms/new")])
        #expect(Self.matched(router.resolve(method: "GET", path: "/realms/new"))?.template == "/realms/:id")
    }

    @Test func headWithoutARouteOfItsOwnIsAnsweredByTheGetRoute() async throws {
        let router = Self.router([("GET", "/healthz"), ("GET", "/realms/:id"), ("GET", "/realms/new"), ("POST", "/realms/:id")])
        #expect(Self.matched(router.resolve(method: "HEAD", path: "/healthz"))?.template == "/healthz")
        #expect(Self.matched(router.resolve(method: "HEAD", path: "/realms/r1"))?.parameters == ["id": "r1"])
        #expect(Self.matched(router.resolve(method: "HEAD", path: "/realms/new"))?.template == "/realms/new")
        guard case .matched(let handler, _, _) = router.resolve(method: "HEAD", path: "/realms/r1") else {
            Issue.record("HEAD /realms/r1 did not match")
            return
        }
        #expect(await handler(HTTPRequest(method: "HEAD", path: "/realms/r1", requestID: "r")).body == Array("GET /realms/:id".utf8))
        #expect(router.routes.count == 4, "no HEAD route is registered")
    }

    @Test func headRouteOfItsOwnWinsOverTheGetRoute() async {
        let router = Self.router([("GET", "/items/:id"), ("HEAD", "/items/:id")])
        guard case .matched(let handler, _, _) = router.resolve(method: "HEAD", path: "/items/1") else {
            Issue.record("expected a match")
            return
        }
        #expect(await handler(HTTPRequest(method: "HEAD", path: "/items/1", requestID: "r")).body == Array("HEAD /items/:id".utf8))
    }

    @Test func headOnARouteWithoutGetIs405WithoutHeadInAllow() {
        let router = Self.router([("POST", "/token"), ("DELETE", "/token")])
        guard case .methodNotAllowed(let allowed) = router.resolve(method: "HEAD", path: "/token") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["DELETE", "POST"])
        guard case .notFound = router.resolve(method: "HEAD", path: "/nothing") else {
            Issue.record("expected 404")
            return
        }
    }

    @Test func routesAreListedInRegistrationOrder() {
        let router = Self.router([("GET", "/b"), ("POST", "/a/:x"), ("GET", "/a/:x")])
        #expect(router.routes.map { "\($0.method) \($0.template)" } == ["GET /b", "POST /a/:x", "GET /a/:x"])
    }
}

@Suite("Path segments")
struct PathSegmentsTests {
    @Test func splitsThenDecodesEachSegment() {
        #expect(PathSegments.decode("/") == [])
        #expect(PathSegments.decode("/a/b%2Fc/d+e/%C3%A9") == ["a", "b/c", "d+e", "é"])
        #expect(PathSegments.decode("/a//b/") == ["a", "", "b", ""])
    }

    @Test func refusesUnreadablePaths() {
        for path in ["", "a/b", "/%", "/%2", "/%G0", "/%00", "/a%0Ab", "/%C3", "/.", "/..", "/a/%2e%2e", "/a/./b"] {
            #expect(PathSegments.decode(path) == nil, "\(path)")
        }
    }
}

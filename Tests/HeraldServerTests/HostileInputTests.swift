import Foundation
import HeraldTestSupport
import JOSE
import Realms
import Testing
@testable import HeraldServer

/// Every route the server registers (taken from the router, so a new route is covered without
/// touching this file) gets a corpus of hostile requests. Whatever arrives, the answer is a
/// 4xx in the route's error shape — the error envelope, or RFC 6749's `{"error":…}` on the
/// OAuth protocol endpoints — never a 5xx, a crash, a hang or a redirect to an unregistered URI.
@Suite("Hostile input on every route")
struct HostileInputTests {
    @Test("malformed, mistyped, duplicated, empty, deep, NUL and non-UTF-8 bodies get a 4xx in the route's error shape")
    func hostileBodies() async throws {
        try await HostileRouteSetup.with { setup in
            try await setup.expectCorpus(HostileCorpus.bodies)
        }
    }

    @Test("hostile queries, headers, credentials, content types and methods never get a 5xx")
    func hostileQueriesHeadersAndMethods() async throws {
        try await HostileRouteSetup.with { setup in
            try await setup.expectCorpus(HostileCorpus.queries + HostileCorpus.headers + HostileCorpus.methods)
        }
    }

    @Test("conflicting Content-Lengths, Content-Length with chunked, bad framing and 1 MB bodies: refused, never a hang")
    func hostileFraming() async throws {
        try await HostileRouteSetup.with { setup in
            try await setup.expectCorpus(HostileCorpus.framing + HostileCorpus.oversize)
        }
    }

    @Test("path tricks in realm, client and account ids (.., %2e%2e, %2F, NUL, case) never reach a resource")
    func pathTricks() async throws {
        try await HostileRouteSetup.with { setup in
            let failures = try await offPool { try setup.runPathTricks() }
            #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.prefix(40).joined(separator: "\n"))")
            try await setup.expectStillServing()
        }
    }

    @Test("authorize redirects only to a registered redirect URI or the realm's login page, whatever the query")
    func authorizeRedirectsOnlyWhereRegistered() async throws {
        try await HostileRouteSetup.with { setup in
            let registered = "https://partner.example/callback"
            let hostileRedirects = [
                "https://evil.example/cb", registered + "/../evil", registered + "%00", registered + "#frag",
                registered + "?x=1", "HTTPS://PARTNER.EXAMPLE/callback", registered + "/", registered + "%2F..%2F",
                "https://partner.example@evil.example/callback", "//evil.example/callback", "javascript:alert(1)", "",
            ]
            var queries: [String] = []
            for redirect in hostileRedirects {
                let encoded = redirect.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
                queries.append("response_type=code&client_id=partner&redirect_uri=\(encoded)&state=s1&code_challenge=\(OAuthFixture.challenge)&code_challenge_method=S256")
                queries.append("response_type=token&client_id=partner&redirect_uri=\(encoded)&state=s2")
                queries.append("client_id=partner&client_id=ios-app&redirect_uri=\(encoded)")
                queries.append("response_type=code&client_id=%00&redirect_uri=\(encoded)&state=s3")
            }
            // A registered redirect with broken parameters: errors may go back to it (and only to it).
            queries.append("response_type=code&client_id=partner&redirect_uri=\(registered)&state=%FF&code_challenge_method=plain")
            queries.append("response_type=code&client_id=partner&redirect_uri=\(registered)&state=a&state=b")
            let allQueries = queries
            let authorize = try setup.route("GET", "/api/oauth/:realm/authorize")
            let failures = try await offPool { () -> [String] in
                allQueries.flatMap { query in
                    setup.probe(HostileCase("authorize ?\(query.prefix(60))").with { $0.query = query }, on: authorize)
                }
            }
            #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
            try await setup.expectStillServing()
        }
    }
}

/// Realm `acme` (Apple provider, first-party `ios-app`, third-party `partner`, confidential
/// `backend`, a login page, an account with live sessions) so hostile requests reach each
/// route's deep validation, and realm `spare`, set up the same way, which the admin routes
/// that change or delete things aim at so they cannot dismantle `acme` mid-run.
struct HostileRouteSetup: Sendable {
    static let spare = "spare"
    /// The admin token the token-revoking route is probed with.
    static let probeTokenName = "hostile-probe"
    static let loginURL = "https://login.acme.example/start"
    static let registeredRedirects = ["https://partner.example/callback", "https://backend.example/cb"]
    /// Fewer routes than this means the route table did not build as it should.
    static let minimumRouteCount = 30

    let fixture: NativeLoginFixture
    let probeClient: HostileProbe
    let accessToken: String
    let refreshToken: String
    let logoutAccessToken: String
    let acmeAccount: String
    let spareAccount: String
    let backendSecret: String

    /// A route resolved to a concrete path, with the credentials that get it past authentication.
    struct Target: Sendable {
        let method: String
        let template: String
        let path: String
        let authorization: String?
        /// Parameters in the template other than `:realm`, with their normal values.
        let parameters: [String: String]
        let realm: String

        /// POST/PUT/PATCH routes whose handler reads a JSON or form body.
        var readsBody: Bool {
            ["POST", "PUT", "PATCH"].contains(method)
                && !["/keys/rotate", "/secret", "/session/logout", "/userinfo"].contains { template.hasSuffix($0) }
        }
        var isAdmin: Bool { template.hasPrefix("/api/admin") }
        /// OAuth protocol endpoints answer RFC 6749/6750 error bodies.
        var isOAuthProtocol: Bool {
            ["/authorize", "/token", "/revoke", "/introspect", "/userinfo"].contains { template.hasSuffix($0) }
        }
        /// The web sign-ins' callbacks (Apple's, Google's) answer browsers with a result page, errors included.
        var answersWithResultPage: Bool { ["/apple/callback", "/google/callback"].contains { template.hasSuffix($0) } }
    }

    static func with(_ body: (HostileRouteSetup) async throws -> Void) async throws {
        // Thousands of broken admin credentials from one address: the admin authentication
        // failure limit (AdminAuthenticationLimitTests) would answer them 429; it is off here.
        try await NativeLoginFixture.with(realmFields: ["loginUrl": .string(loginURL)],
                                          configure: { $0.requestLimits.adminFailuresPerIP = nil }) { fixture in
            let herald = fixture.herald
            let backend = try await herald.admin("POST", "/api/admin/realms/acme/clients", json: [
                "clientId": "backend", "name": "Backend", "confidential": true,
                "redirectUris": [.string(registeredRedirects[1])],
            ])
            try expectStatus(201, backend)
            let login = try await fixture.loginOK()
            let logoutLogin = try await fixture.loginOK()

            try await fixture.createRealm(spare, ["rateLimit": ["failuresPerWindow": 1000, "windowSeconds": 300]])
            try expectStatus(200, await fixture.admin("PUT", "/api/admin/realms/spare/providers/apple", json: [
                "enabled": true, "clientId": "com.example.herald.web", "audiences": [.string(AppleTokenMinter.defaultAudience)],
            ]))
            try expectStatus(201, await fixture.admin("POST", "/api/admin/realms/spare/clients", json: [
                "clientId": "ios-app", "name": "iOS app", "firstParty": true,
            ]))
            let spareAccount = try await herald.accounts.create(realmID: spare, .init(email: "spare@example.com")).id
            // The admin token DELETE /api/admin/tokens/:name revokes (the probes use the env token).
            _ = try await AdminTokenStore(database: herald.application.services.database, now: herald.application.services.now)
                .create(name: probeTokenName, context: ChangeContext(actor: "test"))

            let setup = HostileRouteSetup(
                fixture: fixture, probeClient: HostileProbe(port: herald.application.port),
                accessToken: login["accessToken"]?.stringValue ?? "", refreshToken: login["refreshToken"]?.stringValue ?? "",
                logoutAccessToken: logoutLogin["accessToken"]?.stringValue ?? "",
                acmeAccount: login["userId"]?.stringValue ?? "", spareAccount: spareAccount,
                backendSecret: backend.json["clientSecret"]?.stringValue ?? "")
            try await body(setup)
        }
    }

    /// Every registered route, resolved; the ones that delete or rotate things come last, the
    /// realm deletion very last, so everything before meets a fully set-up realm.
    var targets: [Target] {
        get throws {
            let routes = HeraldApplication.routeTable(services: fixture.herald.application.services)
            let resolved = try routes.map { try target($0.method, $0.template) }
            let ranked = resolved.enumerated().sorted { lhs, rhs in
                let left = rank(lhs.element), right = rank(rhs.element)
                return left != right ? left < right : lhs.offset < rhs.offset
            }
            return ranked.map(\.element)
        }
    }

    private func rank(_ target: Target) -> Int {
        if target.method == "DELETE" { return target.template == "/api/admin/realms/:realm" ? 3 : 2 }
        return target.template.hasSuffix("/session/logout") ? 1 : 0
    }

    /// One route by method and template.
    func route(_ method: String, _ template: String) throws -> Target {
        try target(method, template)
    }

    private func target(_ method: String, _ template: String) throws -> Target {
        let isAdmin = template.hasPrefix("/api/admin")
        let realm = isAdmin && method != "GET" ? Self.spare : NativeLoginFixture.realm
        var parameters: [String: String] = [:]
        var segments: [String] = []
        for segment in template.split(separator: "/", omittingEmptySubsequences: false).map(String.init) {
            switch segment {
            case ":realm": segments.append(realm)
            case ":client":
                parameters[segment] = "ios-app"
                segments.append("ios-app")
            case ":account":
                let account = realm == Self.spare ? spareAccount : acmeAccount
                parameters[segment] = account
                segments.append(account)
            case ":name":
                parameters[segment] = Self.probeTokenName
                segments.append(Self.probeTokenName)
            case ":file":
                // A console file that exists, so the probes reach the file handler, not only the 404.
                parameters[segment] = "app.js"
                segments.append("app.js")
            case let other where other.hasPrefix(":"):
                throw TestClientError("route \(method) \(template): no test value for \(other); add one to HostileRouteSetup")
            default: segments.append(segment)
            }
        }
        let authorization: String? = if isAdmin {
            "Bearer \(RunningHerald.adminToken)"
        } else if template.hasSuffix("/revoke") || template.hasSuffix("/introspect") {
            "Basic " + Data("backend:\(backendSecret)".utf8).base64EncodedString()
        } else if template.hasSuffix("/session/logout") {
            "Bearer \(logoutAccessToken)"
        } else if template.hasSuffix("/me") || template.hasSuffix("/userinfo") {
            "Bearer \(accessToken)"
        } else {
            nil
        }
        return Target(method: method, template: template, path: segments.joined(separator: "/"),
                      authorization: authorization, parameters: parameters, realm: realm)
    }

    /// Runs every case on every route, then checks the server still serves normally.
    func expectCorpus(_ corpus: [HostileCase]) async throws {
        let targets = try targets
        try #require(targets.count >= Self.minimumRouteCount, "the route table looks incomplete: \(targets.count) routes")
        try #require(!corpus.isEmpty, "an empty corpus probes nothing")
        let failures = try await offPool {
            targets.flatMap { target in corpus.flatMap { probe($0, on: target) } }
        }
        #expect(failures.isEmpty, "\(failures.count) failures:\n\(failures.prefix(60).joined(separator: "\n"))")
        try await expectStillServing()
    }

    /// After the corpus: alive, no unhandled error logged, and a normal login and refresh work.
    func expectStillServing() async throws {
        #expect(try await fixture.send("GET", "/healthz").status == 200)
        let unhandled = fixture.herald.logs.captured.filter { $0.contains("unhandled_error") }
        #expect(unhandled.isEmpty, "\(unhandled.prefix(5))")
        let login = try await fixture.loginOK()
        #expect(try await fixture.refresh(login["refreshToken"]?.stringValue ?? "").status == 200)
    }

    /// Sends one case to one route; returns what was wrong with the answer (empty when fine).
    func probe(_ hostile: HostileCase, on target: Target) -> [String] {
        let method = hostile.method ?? target.method
        var path = target.path
        if let query = hostile.query { path += "?" + query }
        var headers = hostile.headers
        switch hostile.authorization {
        case .some(.some(let value)): headers.insert(("Authorization", value), at: 0)
        case .some(.none): break
        case .none: if let authorization = target.authorization { headers.insert(("Authorization", authorization), at: 0) }
        }
        let bytes = HostileProbe.request(method, path, headers: headers, body: hostile.body,
                                         contentLength: hostile.framing == .contentLength)
        let outcome = probeClient.send(bytes, halfClose: hostile.framing == .raw)
        let label = "\(target.method) \(target.template) ← \(hostile.name):"
        return check(outcome, hostile: hostile, target: target, brokeCredentials: hostile.authorization != nil)
            .map { "\(label) \($0)" }
    }

    private func check(_ outcome: HostileOutcome, hostile: HostileCase, target: Target, brokeCredentials: Bool) -> [String] {
        let response: TestHTTPClient.Response
        switch outcome {
        case .timedOut: return ["no answer within \(probeClient.deadlineSeconds) s (hang)"]
        case .notConnected(let errno): return ["could not connect (errno \(errno)): the request never reached the server"]
        case .closedWithoutResponse:
            return hostile.libraryMayRefuse || hostile.framing == .raw ? [] : ["connection closed without a response"]
        case .malformedResponse(let count):
            // A response cut off by a reset is the library dropping the request, as above.
            return hostile.libraryMayRefuse || hostile.framing == .raw ? [] : ["\(count) bytes that are no HTTP response"]
        case .response(let answer): response = answer
        }
        var problems: [String] = []
        let status = response.status
        if status >= 500 { problems.append("\(status) \(response.text.prefix(200))") }
        if let exact = hostile.exactStatus, status != exact { problems.append("expected \(exact), got \(status)") }
        if hostile.mustFailEverywhere || (hostile.mustFailOnBodyRoutes && target.readsBody), status < 400 {
            problems.append("accepted with \(status)")
        }
        if brokeCredentials, target.isAdmin, status != 401 {
            problems.append("admin route with broken credentials answered \(status), not 401")
        }
        if (300..<400).contains(status) {
            let location = response.header("Location") ?? ""
            let allowed = target.template.hasSuffix("/authorize")
                && (Self.registeredRedirects + [Self.loginURL]).contains { registered in
                    location == registered || location.hasPrefix(registered + "?") || location.hasPrefix(registered + "&")
                }
            // GET /console's only answer is the fixed, same-origin move to /console/.
            let consoleMove = target.template == "/console" && status == 301 && location == "/console/"
            if !allowed && !consoleMove { problems.append("redirect \(status) to \(location.prefix(120))") }
        }
        if status >= 400 { problems += checkErrorBody(response, hostile: hostile, target: target) }
        if let forbidden = hostile.mustNotEcho, response.text.contains(forbidden) || (response.header("Location") ?? "").contains(forbidden) {
            problems.append("the response reflects \(forbidden)")
        }
        for secret in [RunningHerald.adminToken, backendSecret, accessToken, refreshToken, logoutAccessToken]
        where !secret.isEmpty && response.text.contains(secret) {
            problems.append("the response echoes a credential")
        }
        return problems
    }

    private func checkErrorBody(_ response: TestHTTPClient.Response, hostile: HostileCase, target: Target) -> [String] {
        let json = response.json
        if let code = json["code"]?.stringValue {
            var problems: [String] = []
            if code.isEmpty || json["message"]?.stringValue == nil { problems.append("envelope without code or message") }
            if json["status"]?.doubleValue != Double(response.status) { problems.append("envelope status \(json["status"] ?? .null) ≠ \(response.status)") }
            let requestID = response.header("X-Request-Id")
            if requestID == nil || json["requestId"]?.stringValue != requestID { problems.append("envelope requestId ≠ X-Request-Id") }
            return problems
        }
        if target.isOAuthProtocol, let error = json["error"]?.stringValue, !error.isEmpty {
            let known: Set = ["invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
                              "unsupported_grant_type", "invalid_scope", "unsupported_token_type", "invalid_token",
                              "insufficient_scope", "unsupported_response_type", "access_denied"]
            return known.contains(error) ? [] : ["unknown OAuth error \(error)"]
        }
        if target.answersWithResultPage, Self.resultPageError(response) != nil { return [] }
        // The HTTP library answers some malformed requests itself, before Herald sees them.
        if hostile.libraryMayRefuse && (400..<500).contains(response.status) { return [] }
        return ["\(response.status) without an error body: \(response.text.prefix(120))"]
    }

    /// The Apple web callback answers with a result page for the app: its error is the
    /// `herald-login-result` JSON with `status: error`, a `code` and a `message`.
    static func resultPageError(_ response: TestHTTPClient.Response) -> String? {
        let html = response.text
        guard response.header("Content-Type")?.hasPrefix("text/html") == true,
              let start = html.range(of: #"<script type="application/json" id="herald-login-result">"#),
              let end = html.range(of: "</script>", range: start.upperBound..<html.endIndex),
              let result = (try? JSONValue.parse(Array(html[start.upperBound..<end.lowerBound].utf8)))?.objectValue,
              result["status"] == "error", result["message"]?.stringValue != nil else { return nil }
        return result["code"]?.stringValue
    }

    /// Every path parameter of every route replaced, one at a time, by each trick. Throws
    /// when the route table cannot be resolved or has no route with a path parameter, so the
    /// test cannot pass by probing nothing.
    func runPathTricks() throws -> [String] {
        let targets = try targets
        // Off the test's task (offPool), so a thrown error, not #require, fails the test.
        guard targets.count >= Self.minimumRouteCount else {
            throw TestClientError("the route table looks incomplete: \(targets.count) routes")
        }
        var probed = 0
        var failures: [String] = []
        for target in targets {
            let templateSegments = target.template.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            let parameterIndexes = templateSegments.indices.filter { templateSegments[$0].hasPrefix(":") }
            let normal = target.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            for index in parameterIndexes {
                for trick in HostileCorpus.pathTricks {
                    var segments = normal
                    segments[index] = trick
                    let body: [UInt8] = target.readsBody ? Array("{}".utf8) : []
                    let headers = [("Content-Type", "application/json")] + (target.authorization.map { [("Authorization", $0)] } ?? [])
                    let bytes = HostileProbe.request(target.method, segments.joined(separator: "/"), headers: headers, body: body)
                    let label = "\(target.method) \(target.template) with \(templateSegments[index]) = \(trick.prefix(30)):"
                    probed += 1
                    switch probeClient.send(bytes) {
                    case .timedOut: failures.append("\(label) hang")
                    case .notConnected(let errno): failures.append("\(label) could not connect (errno \(errno))")
                    case .closedWithoutResponse: failures.append("\(label) closed without a response")
                    case .malformedResponse(let count): failures.append("\(label) \(count) bytes that are no HTTP response")
                    case .response(let response):
                        if !(400..<500).contains(response.status) {
                            failures.append("\(label) \(response.status) \(response.text.prefix(120))")
                        } else if response.json["code"]?.stringValue == nil && response.json["error"]?.stringValue == nil
                                    && !(target.answersWithResultPage && Self.resultPageError(response) != nil) {
                            failures.append("\(label) \(response.status) without an error body")
                        }
                    }
                }
            }
        }
        guard probed > 0 else { throw TestClientError("no route has a path parameter: no path trick was sent") }
        return failures
    }
}

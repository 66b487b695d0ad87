import Foundation
import JOSE
import Testing
@testable import HeraldServer

@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let specURL = repositoryRoot.appendingPathComponent("openapi/herald.yaml")
    static let operationKeys: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

    static func specText() throws -> String {
        String(decoding: try Data(contentsOf: specURL), as: UTF8.self)
    }

    static func spec() throws -> YAMLNode {
        try YAMLParser.parse(specText())
    }

    /// `/api/oauth/{realmId}/jwks.json` and `/api/oauth/:realm/jwks.json` both become `/api/oauth/{}/jwks.json`.
    static func normalized(_ template: String) -> String {
        template.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") || (segment.hasPrefix("{") && segment.hasSuffix("}")) ? "{}" : String(segment)
        }.joined(separator: "/")
    }

    /// Where two byte sequences first differ ("" when equal), short enough for a test message.
    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String {
        guard a != b else { return "" }
        let index = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        let line = a.prefix(index).filter { $0 == 10 }.count + 1
        return "byte \(index) (line \(line)) of \(a.count) vs \(b.count) bytes"
    }

    @Test("the embedded document is byte-identical to openapi/herald.yaml (run scripts/embed-openapi.sh)")
    func embeddedMatchesFile() throws {
        let file = Array(try Data(contentsOf: Self.specURL))
        let difference = Self.firstDifference(Array(OpenAPIDocument.yaml.utf8), file)
        #expect(difference.isEmpty, "embedded spec differs at \(difference): run scripts/embed-openapi.sh")
    }

    @Test("the document parses as OpenAPI 3.1 with paths, info and the admin security scheme")
    func parses() throws {
        let spec = try Self.spec()
        #expect(spec["openapi"]?.scalar?.hasPrefix("3.1.") == true)
        #expect(spec["info"]?["title"]?.scalar == "Herald")
        #expect(spec["info"]?["version"]?.scalar?.isEmpty == false)
        #expect((spec["paths"]?.pairs?.count ?? 0) > 10)
        #expect(spec["components"]?["securitySchemes"]?["adminToken"]?["scheme"]?.scalar == "bearer")
        #expect(spec["components"]?["schemas"]?["Error"]?["required"]?.items?.compactMap(\.scalar)
            == ["status", "code", "message", "requestId"])
    }

    @Test("the YAML reader refuses what it does not understand, so a broken spec fails")
    func parserRefusesBrokenYAML() throws {
        for broken in ["a: 1\na: 2\n", "a:\n  b: 1\n c: 2\n", "a: [1, 2\n", "a: \"open\n", "a:\n\t- b\n", "- a\nb: 1\n"] {
            #expect(throws: (any Error).self, "\(broken)") { try YAMLParser.parse(broken) }
        }
        let parsed = try YAMLParser.parse("a:\n  - b: 1\n    c: [x, \"y\"]\n  - |\n    text\n")
        #expect(parsed == .mapping([
            YAMLEntry("a", .sequence([
                .mapping([YAMLEntry("b", .scalar("1")), YAMLEntry("c", .sequence([.scalar("x"), .scalar("y")]))]),
                .scalar("text\n"),
            ])),
        ]))
    }

    @Test("every $ref resolves and every operation has an id, responses and (for admin) the token and 401")
    func referencesAndOperations() throws {
        let spec = try Self.spec()
        var references: [String] = []
        func collect(_ node: YAMLNode) {
            switch node {
            case .mapping(let pairs):
                for entry in pairs {
                    if entry.key == "$ref", let target = entry.value.scalar { references.append(target) } else { collect(entry.value) }
                }
            case .sequence(let items): items.forEach(collect)
            case .scalar: break
            }
        }
        collect(spec)
        #expect(references.count > 50)
        for reference in references {
            #expect(spec.resolve(pointer: reference) != nil, "unresolved \(reference)")
        }
        var operationIDs: Set<String> = []
        for pathEntry in spec["paths"]?.pairs ?? [] {
            let path = pathEntry.key
            for operationEntry in pathEntry.value.pairs ?? [] where Self.operationKeys.contains(operationEntry.key) {
                let method = operationEntry.key
                let operation = operationEntry.value
                let id = operation["operationId"]?.scalar ?? ""
                #expect(!id.isEmpty && operationIDs.insert(id).inserted, "\(method) \(path): operationId")
                #expect(operation["responses"]?.pairs?.isEmpty == false, "\(method) \(path): responses")
                if path.hasPrefix("/api/admin") {
                    #expect(operation["security"]?.items?.first?["adminToken"] != nil, "\(method) \(path): security")
                    #expect(operation["responses"]?["401"] != nil, "\(method) \(path): 401")
                }
            }
        }
        #expect(operationIDs.count > 30, "only \(operationIDs.count) operations were checked")
    }

    @Test("the spec and the router describe exactly the same routes")
    func specMatchesRouter() async throws {
        try await RunningHerald.with { herald in
            let router = Set(HeraldApplication.routeTable(services: herald.application.services).map {
                "\($0.method.uppercased()) \(Self.normalized($0.template))"
            })
            var documented: Set<String> = []
            for pathEntry in try Self.spec()["paths"]?.pairs ?? [] {
                for operationEntry in pathEntry.value.pairs ?? [] where Self.operationKeys.contains(operationEntry.key) {
                    documented.insert("\(operationEntry.key.uppercased()) \(Self.normalized(pathEntry.key))")
                }
            }
            // Two empty sets agree too: an unbuilt route table or an unread spec must fail here.
            try #require(router.count >= 30, "the route table looks incomplete: \(router.count) routes")
            try #require(documented.count >= 30, "the spec looks unread: \(documented.count) operations")
            #expect(router.subtracting(documented).sorted() == [], "routes missing from openapi/herald.yaml")
            #expect(documented.subtracting(router).sorted() == [], "documented routes the router lacks")
        }
    }

    @Test("GET /api-docs/openapi.yaml serves the document as application/yaml")
    func served() async throws {
        try await RunningHerald.with { herald in
            let response = try await herald.send("GET", "/api-docs/openapi.yaml")
            #expect(response.status == 200)
            #expect(response.header("Content-Type")?.hasPrefix("application/yaml") == true)
            let difference = Self.firstDifference(response.body, Array(try Data(contentsOf: Self.specURL)))
            #expect(difference.isEmpty, "served document differs from openapi/herald.yaml at \(difference)")
        }
    }

    /// The OAuth protocol endpoints, where every 400 is in the OAuth shape.
    static let oauthOperations: Set<String> = ["authorize", "token", "revokeToken", "introspectToken", "getUserinfo",
                                                 "postUserinfo"]

    @Test("every operation documents 400, 413, 414 and 431 through the shared components; OAuth endpoints' 400 is OAuthError")
    func transportLimitsOnEveryOperation() throws {
        let spec = try Self.spec()
        var operations = 0
        for pathEntry in spec["paths"]?.pairs ?? [] {
            for operationEntry in pathEntry.value.pairs ?? [] where Self.operationKeys.contains(operationEntry.key) {
                operations += 1
                let id = operationEntry.value["operationId"]?.scalar ?? ""
                let responses = operationEntry.value["responses"]
                for (status, component) in [("413", "PayloadTooLarge"), ("414", "URITooLong"),
                                            ("431", "RequestHeaderFieldsTooLarge")] {
                    #expect(responses?[status]?["$ref"]?.scalar == "#/components/responses/\(component)", "\(id): \(status)")
                }
                guard let badRequest = responses?["400"] else {
                    Issue.record("\(id): no 400")
                    continue
                }
                let resolved = badRequest["$ref"]?.scalar.flatMap { spec.resolve(pointer: $0) } ?? badRequest
                let schema = resolved["content"]?["application/json"]?["schema"]?["$ref"]?.scalar
                let expected = Self.oauthOperations.contains(id) ? "#/components/schemas/OAuthError" : "#/components/schemas/Error"
                #expect(schema == expected, "\(id): 400 schema")
            }
        }
        #expect(operations > 30)
    }

    @Test("the 413/414/431 components name the codes the server sends")
    func transportLimitCodesMatchTheServer() throws {
        let responses = try Self.spec()["components"]?["responses"]
        for (status, component) in [(413, "PayloadTooLarge"), (414, "URITooLong"), (431, "RequestHeaderFieldsTooLarge")] {
            let example = responses?[component]?["content"]?["application/json"]?["example"]
            #expect(example?["status"]?.scalar == String(status), "\(component)")
            #expect(example?["code"]?.scalar == APIError.forServerStatus(status).code, "\(component)")
            #expect(APIError.forServerStatus(status).code != "bad_request", "\(status) has a code of its own")
        }
    }

    @Test("token, revoke and introspect declare client_secret_basic and client_secret_post; introspect refuses anonymous callers")
    func clientAuthentication() throws {
        let spec = try Self.spec()
        let schemes = spec["components"]?["securitySchemes"]
        #expect(schemes?["clientSecretBasic"]?["type"]?.scalar == "http")
        #expect(schemes?["clientSecretBasic"]?["scheme"]?.scalar == "basic")
        #expect(schemes?["clientSecretPost"]?["type"]?.scalar == "http")
        #expect(schemes?["clientSecretPost"]?["description"]?.scalar?.contains("client_secret_post") == true)
        for (path, anonymous) in [("/api/oauth/{realmId}/token", true), ("/api/oauth/{realmId}/revoke", true),
                                  ("/api/oauth/{realmId}/introspect", false)] {
            let requirements = spec["paths"]?[path]?["post"]?["security"]?.items ?? []
            let names = requirements.map { $0.pairs?.map(\.key) ?? [] }
            #expect(names.contains(["clientSecretBasic"]), "\(path)")
            #expect(names.contains(["clientSecretPost"]), "\(path)")
            // `{}`: a public client sends only client_id (the discovery document's `none`).
            #expect(names.contains([]) == anonymous, "\(path)")
        }
    }
}

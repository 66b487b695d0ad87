import Foundation
import Testing
@testable import HeraldServer

/// The admin console (console/, embedded by scripts/embed-console.sh): the embedded copy is
/// the folder, it is served under /console/ with headers that keep its CSP meaningful, and its
/// files hold nothing that CSP would block or that would let API data become markup.
@Suite("Admin console")
struct ConsoleTests {
    static let folder = OpenAPIDocumentTests.repositoryRoot.appendingPathComponent("console")

    static func filesOnDisk() throws -> [String: [UInt8]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }
        return try Dictionary(uniqueKeysWithValues: names.map { name in
            (name, Array(try Data(contentsOf: folder.appendingPathComponent(name))))
        })
    }

    static func source(_ name: String) -> String {
        String(decoding: ConsoleAsset.all[name]?.bytes ?? [], as: UTF8.self)
    }

    @Test("the embedded console is byte-identical to console/ (run scripts/embed-console.sh)")
    func embeddedMatchesFolder() throws {
        let disk = try Self.filesOnDisk()
        #expect(Set(ConsoleAsset.all.keys) == Set(disk.keys), "run scripts/embed-console.sh")
        for (name, bytes) in disk {
            let difference = OpenAPIDocumentTests.firstDifference(ConsoleAsset.all[name]?.bytes ?? [], bytes)
            #expect(difference.isEmpty, "console/\(name) differs at \(difference): run scripts/embed-console.sh")
        }
        #expect(disk["index.html"] != nil && disk["app.js"] != nil)
    }

    @Test("GET /console redirects to /console/, which is index.html with the strict headers")
    func indexWithStrictHeaders() async throws {
        try await RunningHerald.with { herald in
            let redirect = try await herald.send("GET", "/console")
            #expect(redirect.status == 301)
            #expect(redirect.header("Location") == "/console/")
            let index = try await herald.send("GET", "/console/")
            #expect(index.status == 200)
            #expect(index.body == ConsoleAsset.all["index.html"]?.bytes)
            #expect(index.header("Content-Type") == "text/html; charset=utf-8")
            #expect(index.header("Content-Security-Policy") == "default-src 'self'; script-src 'self'; style-src 'self'; "
                + "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
            #expect(index.header("X-Frame-Options") == "DENY")
            #expect(index.header("X-Content-Type-Options") == "nosniff")
            #expect(index.header("Cache-Control") == "no-cache")
            // No admin token is needed for the files: they hold no data, the API calls do.
            #expect(index.header("ETag")?.hasPrefix("\"") == true)
        }
    }

    @Test("every file is served with its media type; unknown names are 404")
    func filesWithTheirContentTypes() async throws {
        try await RunningHerald.with { herald in
            for (name, asset) in ConsoleAsset.all {
                let response = try await herald.send("GET", "/console/\(name)")
                #expect(response.status == 200, "\(name)")
                #expect(response.body == asset.bytes, "\(name)")
                let expected = name.hasSuffix(".js") ? "text/javascript; charset=utf-8"
                    : name.hasSuffix(".css") ? "text/css; charset=utf-8" : "text/html; charset=utf-8"
                #expect(response.header("Content-Type") == expected, "\(name)")
                #expect(response.header("X-Frame-Options") == "DENY", "\(name)")
            }
            for path in ["/console/nope.js", "/console/index.html/", "/console//", "/console/%2e%2e%2fherald.db"] {
                let response = try await herald.send("GET", path)
                #expect((400...404).contains(response.status), "\(path)")
                #expect(response.header("Content-Type")?.hasPrefix("text/") != true, "\(path)")
            }
            #expect(try await herald.send("GET", "/console/nope.js").json["code"] == "not_found")
        }
    }

    @Test("a matching If-None-Match is answered 304 without a body; a stale one gets the file")
    func etagRevalidation() async throws {
        try await RunningHerald.with { herald in
            let first = try await herald.send("GET", "/console/app.js")
            let etag = try #require(first.header("ETag"))
            let again = try await herald.send("GET", "/console/app.js", headers: [("If-None-Match", "\"other\", \(etag)")])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            let stale = try await herald.send("GET", "/console/app.js", headers: [("If-None-Match", "\"stale\"")])
            #expect(stale.status == 200)
            #expect(stale.body == first.body)
        }
    }

    @Test("no inline script, style or handler in the HTML, so the CSP holds without 'unsafe-inline'")
    func noInlineCodeInHTML() throws {
        let html = Self.source("index.html").lowercased()
        let scripts = html.components(separatedBy: "<script").dropFirst()
        #expect(!scripts.isEmpty)
        for script in scripts {
            let tag = script.prefix { $0 != ">" }
            #expect(tag.contains(" src="), "a <script> without src")
            #expect(script.dropFirst(tag.count + 1).hasPrefix("</script>"), "a <script> with inline content")
        }
        #expect(!html.contains("<style"))
        #expect(!html.contains(" style="))
        #expect(html.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil, "inline event handler")
        #expect(!html.contains("javascript:"))
    }

    @Test("the modules never turn strings into markup or code, and import only embedded files")
    func modulesStayDOMOnlyAndSelfContained() throws {
        let modules = ConsoleAsset.all.keys.filter { $0.hasSuffix(".js") }
        #expect(modules.count >= 8)
        for name in modules {
            let source = Self.source(name)
            for forbidden in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function",
                              "setAttribute(\"style\"", "localStorage", "document.cookie"] {
                #expect(!source.contains(forbidden), "\(name) uses \(forbidden)")
            }
            let imports = source.matches(of: /from "([^"]+)"/).map { String($0.output.1) }
            for target in imports {
                #expect(target.hasPrefix("./") && ConsoleAsset.all[String(target.dropFirst(2))] != nil,
                        "\(name) imports \(target), which is not an embedded file")
            }
        }
        // The token lives only in sessionStorage (see api.js): per tab, gone when it closes.
        #expect(Self.source("api.js").contains("sessionStorage"))
    }
}

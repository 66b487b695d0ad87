import HTTPServer

/// libFuzzer entry point for the query/form decoder (`HTTPRequest.queryItems()`, `query(_:)`)
/// and, for the same bytes as a path, the router's strict percent-decoding of parameters.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQuery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    let request = HTTPRequest(method: "GET", path: "/", rawQuery: text)
    let items = request.queryItems()
    // Empty pairs are skipped, so there are never more items than "&"-separated pieces.
    precondition(items.count <= text.utf8.filter { $0 == UInt8(ascii: "&") }.count + 1, "more items than pairs")
    if let first = items.first {
        precondition(request.query(first.name) == first.value, "query(_:) disagrees with queryItems()")
    }
    // The same bytes as a path below a route with parameters ("/r/<text>"); a "/" in them may
    // reach the two-parameter route.
    QueryFuzzRouter.probe(path: "/r/" + text)
    return 0
}

/// One router shared by all runs: routes are built once, lookups are what is fuzzed.
enum QueryFuzzRouter {
    static let router: Router = {
        var router = Router()
        router.add("GET", "/r/:realm", { _ in HTTPResponse(status: 200) })
        router.add("GET", "/r/:realm/clients/:client", { _ in HTTPResponse(status: 200) })
        return router
    }()

    static func probe(path: String) {
        if case .matched(_, let parameters, _) = router.resolve(method: "GET", path: path) {
            for value in parameters.values {
                precondition(!value.utf8.contains { $0 < 0x20 || $0 == 0x7F }, "a decoded path parameter holds a control byte")
            }
        }
    }
}

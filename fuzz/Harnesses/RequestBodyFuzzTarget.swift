import HTTPServer
import JOSE

/// libFuzzer entry point for `JSONRequestBody` (HeraldServer's JSON body decoder, compiled
/// into this harness from its source): the first byte picks a Content-Type, the rest is the
/// body. Every field reader runs over every member, as a handler would, and the decoder must
/// either throw an `APIError` with a 4xx status or yield problems that `validate()` reports.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestBody(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    let contentTypes = [nil, "application/json", "application/json; charset=utf-8", "application/scim+json",
                        "text/plain", "APPLICATION/JSON ;x=y", ""]
    let selector = bytes.first.map { Int($0) % contentTypes.count } ?? 0
    var headers = HTTPHeaders()
    if let type = contentTypes[selector] { headers.add("Content-Type", type) }
    let request = HTTPRequest(method: "POST", path: "/fuzz", headers: headers, body: Array(bytes.dropFirst()))
    let allowed: Set<String>? = selector % 2 == 0 ? ["name", "enabled", "count", "uris", "nested"] : nil
    var body: JSONRequestBody
    do {
        body = try JSONRequestBody(request, allowedFields: allowed)
    } catch {
        precondition((400..<500).contains(error.status), "decoder failure is not a 4xx")
        return 0
    }
    for key in Array(body.object.keys) {
        _ = body.string(key, required: true, maxLength: 64)
        _ = body.bool(key)
        _ = body.integer(key, in: -1_000...1_000_000)
        _ = body.strings(key, maxCount: 5, maxLength: 32)
        _ = body.object(key)
    }
    _ = body.string("absent", required: true)
    do {
        try body.validate()
        precondition(body.problems.isEmpty, "validate() passed with problems")
    } catch {
        precondition(error.status == 400 && !body.problems.isEmpty, "validate() failed without problems")
    }
    return 0
}

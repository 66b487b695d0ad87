import HTTPServer
@testable import HeraldServer
import JOSE
import Testing

/// What a JSON body must be before any field is read: its media type, and strings without NUL.
@Suite("JSON request bodies")
struct JSONRequestBodyTests {
    private static func request(contentType: String?, body: String = #"{"name":"ada"}"#) -> HTTPRequest {
        var headers = HTTPHeaders()
        if let contentType { headers.add("Content-Type", contentType) }
        return HTTPRequest(method: "POST", path: "/", headers: headers, body: Array(body.utf8))
    }

    @Test("application/json in any case, with parameters or as a +json type, and no Content-Type are read; others are a 415")
    func mediaTypes() throws {
        for accepted in [nil, "application/json", "Application/JSON", "application/json; charset=utf-8",
                         " application/json ;charset=UTF-8", "application/merge-patch+json"] {
            var body = try JSONRequestBody(Self.request(contentType: accepted))
            #expect(body.string("name") == "ada", "\(accepted ?? "none")")
        }
        for refused in ["text/plain", "application/jsonx", "application/json-seq", "multipart/form-data", ""] {
            let error = #expect(throws: APIError.self, "\(refused)") { try JSONRequestBody(Self.request(contentType: refused)) }
            #expect(error?.status == 415, "\(refused)")
        }
    }

    @Test("a string with a NUL anywhere is a problem of its field; other control characters and non-ASCII text are read as sent")
    func nulInStrings() throws {
        var body = try JSONRequestBody(Self.request(contentType: "application/json",
                                                    body: #"{"a":"x\u0000y","b":"\u0000","c":"é\u0001ü 🍏"}"#))
        #expect(body.string("a") == nil)
        #expect(body.string("b") == nil)
        #expect(body.string("c") == "é\u{1}ü 🍏")
        #expect(body.problems == ["a": "must not contain NUL", "b": "must not contain NUL"])
    }
}

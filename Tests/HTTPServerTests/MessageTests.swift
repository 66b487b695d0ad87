import Testing
@testable import HTTPServer

@Suite("HTTPHeaders")
struct HTTPHeadersTests {
    @Test func lookupIgnoresCaseAndReturnsFirstValue() {
        let headers = HTTPHeaders([("Content-Type", "text/plain"), ("X-Multi", "1"), ("x-multi", "2")])
        #expect(headers["content-type"] == "text/plain")
        #expect(headers["CONTENT-TYPE"] == "text/plain")
        #expect(headers["x-MULTI"] == "1")
        #expect(headers.values("X-Multi") == ["1", "2"])
        #expect(headers["Missing"] == nil)
        #expect(headers.values("Missing") == [])
    }

    @Test func addKeepsOrderAndDuplicates() {
        var headers = HTTPHeaders()
        headers.add("Set-Cookie", "a=1")
        headers.add("Vary", "Origin")
        headers.add("set-cookie", "b=2")
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["Set-Cookie=a=1", "Vary=Origin", "set-cookie=b=2"])
    }

    @Test func setReplacesEveryValueInPlace() {
        var headers = HTTPHeaders([("A", "1"), ("B", "x"), ("a", "2"), ("C", "y")])
        headers.set("a", "3")
        #expect(headers.map { "\($0.name)=\($0.value)" } == ["a=3", "B=x", "C=y"])
        headers.set("D", "4")
        #expect(headers["d"] == "4")
        #expect(headers.count == 4)
    }

    @Test func removeDropsEveryValue() {
        var headers: HTTPHeaders = ["A": "1", "B": "2"]
        headers.add("a", "3")
        headers.remove("A")
        #expect(headers.map(\.name) == ["B"])
    }

    @Test func nonASCIINamesAreNotFolded() {
        let headers = HTTPHeaders([("X-É", "1")])
        #expect(headers["x-é"] == nil)
        #expect(headers["X-É"] == "1")
    }
}

@Suite("HTTPRequest query decoding")
struct HTTPRequestQueryTests {
    private func request(_ rawQuery: String?) -> HTTPRequest {
        HTTPRequest(method: "GET", path: "/", rawQuery: rawQuery)
    }

    @Test func formDecodesNamesAndValues() {
        let items = request("q=a+b%26c&na%6De=%C3%A9t%C3%A9&flag&empty=&&x=1=2").queryItems()
        #expect(items.map(\.name) == ["q", "name", "flag", "empty", "x"])
        #expect(items.map(\.value) == ["a b&c", "été", "", "", "1=2"])
    }

    @Test func malformedEscapesStayLiteral() {
        #expect(request("a=%zz%4&b=100%").queryItems().map(\.value) == ["%zz%4", "100%"])
    }

    @Test func queryReturnsTheFirstValue() {
        let request = request("scope=openid&scope=email")
        #expect(request.query("scope") == "openid")
        #expect(request.query("missing") == nil)
    }

    @Test func noQueryHasNoItems() {
        #expect(request(nil).queryItems().isEmpty)
        #expect(request("").queryItems().isEmpty)
    }
}

@Suite("Form bodies")
struct FormDecodingTests {
    @Test("form decoding handles + and %XX and refuses bad escapes and bad UTF-8")
    func strictPairs() throws {
        let pairs = try #require(FormDecoding.pairs(Array("a=1+2&b=%41%2b&c&d=".utf8)))
        #expect(pairs.map(\.name) == ["a", "b", "c", "d"])
        #expect(pairs.map(\.value) == ["1 2", "A+", "", ""])
        #expect(FormDecoding.pairs(Array("a=%4".utf8)) == nil)
        #expect(FormDecoding.pairs(Array("a=%zz".utf8)) == nil)
        #expect(FormDecoding.pairs(Array("a=%FF".utf8)) == nil)
        #expect(FormDecoding.decode("my%3Aclient") == "my:client")
        #expect(FormDecoding.decode("100%") == nil)
    }
}

@Suite("RequestID")
struct RequestIDTests {
    @Test(arguments: ["a", "abc-123.DEF_4", String(repeating: "x", count: 128)])
    func plainIDsAreValid(id: String) {
        #expect(RequestID.isValid(id))
        #expect(RequestID.resolve(incoming: id) == id)
    }

    @Test(arguments: ["", "has space", "semi;colon", "é", String(repeating: "x", count: 129), "new\nline"])
    func otherIDsAreReplaced(id: String) {
        #expect(!RequestID.isValid(id))
        let resolved = RequestID.resolve(incoming: id)
        #expect(resolved != id)
        #expect(RequestID.isValid(resolved))
    }

    @Test func generatedIDsAre32HexDigitsAndDistinct() {
        let ids = (0..<100).map { _ in RequestID.generate() }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { $0.count == 32 && $0.allSatisfy(\.isHexDigit) })
    }
}

@Suite("Optional whitespace")
struct OptionalWhitespaceTests {
    @Test func trimsSpacesAndTabsAtBothEndsOnly() {
        #expect(" \tapplication/json \t".trimmingOptionalWhitespace == "application/json")
        #expect("Bearer  a b ".trimmingOptionalWhitespace == "Bearer  a b")
        #expect("token".trimmingOptionalWhitespace == "token")
    }

    @Test func allWhitespaceOrEmptyIsEmpty() {
        #expect(" \t ".trimmingOptionalWhitespace.isEmpty)
        #expect("".trimmingOptionalWhitespace.isEmpty)
    }

    @Test func otherWhitespaceIsNotOptionalWhitespace() {
        // RFC 9110 §5.6.3: only SP and HTAB; a line break or no-break space is content.
        #expect("\ntoken\u{00A0}".trimmingOptionalWhitespace == "\ntoken\u{00A0}")
    }
}
